# `make cluster`: a virtual cluster of CLUSTER_HOSTS hosts on this machine (as root), for
# running jobs across real hosts by hand (scripts/cluster.sh; docs/CONFORMANCE.md,
# "Across real hosts").
#
#   make cluster                 bring up vc1..vc3 (idempotent) and print the exports
#   make cluster CLUSTER_HOSTS=4
#   make cluster-down            stop the private Slurms (launchers.sh stop), remove every host

CLUSTER_HOSTS ?= 3

.PHONY: cluster cluster-down

cluster:
	@scripts/cluster.sh up $(CLUSTER_HOSTS)
	@scripts/cluster.sh env

cluster-down:
	@scripts/launchers.sh stop

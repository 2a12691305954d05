# `make ci-stress`: CI as on a busy machine. Clean clones of the committed HEAD each run
# `.ci/run` while one busy loop per core takes every CPU (scripts/ci-stress.sh); fails if
# a run fails or takes over 30 minutes. CI_STRESS_RUNS runs (default 3). docs/CI.md.

CI_STRESS_RUNS ?= 3

.PHONY: ci-stress

ci-stress:
	scripts/ci-stress.sh $(CI_STRESS_RUNS) $(BUILD)/ci-stress

# Fuzzing the three parsers that read what a server sends (a reply line,
# PMI_process_mapping, Flux's task map) (cargo fuzz, libFuzzer).
# Not part of `make check` (it takes minutes); the same invariants run as property
# tests in `cargo test`. FUZZ_SECONDS per target.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := reply mapping taskmap

.PHONY: fuzz
fuzz:
	mkdir -p $(BUILD)
	command -v cargo-fuzz >/dev/null || $(CARGO) install --locked cargo-fuzz --version 0.13.2
	cd fuzz && for t in $(FUZZ_TARGETS); do \
	  RUSTC_BOOTSTRAP=1 $(CARGO) fuzz run $$t -- -max_total_time=$(FUZZ_SECONDS) \
	    $$(test -f $$t.dict && echo -dict=$$t.dict) \
	    > ../$(BUILD)/fuzz-$$t.log 2>&1; rc=$$?; \
	  grep -E '^Done|SUMMARY|panicked|deadly signal' ../$(BUILD)/fuzz-$$t.log | sed "s/^/fuzz $$t: /"; \
	  [ $$rc = 0 ] || { echo "fuzz $$t: cargo fuzz exited $$rc (../$(BUILD)/fuzz-$$t.log)"; exit 1; }; \
	  test -z "$$(ls artifacts/$$t 2>/dev/null)" || { echo "fuzz $$t: findings in fuzz/artifacts/$$t"; exit 1; }; \
	done

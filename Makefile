# graft: one non-recursive Makefile.  Everything generated or built goes to
# build/ (generated C sources under build/gen/); nothing there is committed.
#
#   make            build graft, graftc, libgraft.a and libgraft.so (with the rule
#                   library compiled by graftc into build/gen/rules_*.c), the layer
#                   libraries (libgraft-ir.a, -dsl, -engine, -tools) and the tests
#   make test       build and run the Check suites (CK_RUN_SUITE=ir make test), then
#                   tests/python/ (the Python module, python/graft/)
#   make check-layers  includes written with their layer path, no upward include
#                   between the layers, no circle of files calling each other
#                   (tests/check_layers.py)
#   make demo       optimize the bundled example model and check it still computes the same
#   make install    install graft, graftc, libgraft.a, its headers, graft.pc and the
#                   Python module with its libgraft.so (PREFIX=/usr/local, DESTDIR for staging;
#                   PYTHON_DIR=$(PREFIX)/lib/python3.X/dist-packages)
#   make example-custom-rules  install into build/prefix, build examples/custom-rules
#                   against it, run it and check its rules fired and the model computes the same;
#                   the same optimizer from the layer libraries writes the same model, and
#                   neither links the rule language's front end or a runner
#   make deps       apt-get the Debian packages graft needs (run as root)
#   make sanitize   build with ASan+UBSan into build/san/ and run the tests (a debug build)
#   make debug      build with -O0 -g -DGRAFT_DEBUG into build/debug/ and run the tests
#   make valgrind   run the tests under valgrind
#   make fuzz-load  libFuzzer run over the ONNX loader (FUZZ_SECONDS=60)
#   make fuzz-text  the same over the ONNX text parser; make fuzz-dsl over the rule language;
#                   make fuzz-rules over graft optimize --rules and graft verify (load,
#                   interpret, generate instances); make fuzz-graph over whole models
#                   built from the op schema table: load, infer, optimize, save, run
#                   (FUZZ_GRAPH_SECONDS=60)
#   make ort-gate   what graft writes, graft verify's instances and graft convert's
#                   conversions, in ONNX Runtime; the layout level's Transposes on the
#                   corpus against ORT's transpose optimizer
#   make difftest   random valid graphs (tests/difftest/gen.py), graft optimize in several
#                   configurations, each result against the original in ONNX Runtime on
#                   ordinary and special-value inputs (DIFFTEST_SEEDS=0-1999, DIFFTEST_SECONDS
#                   budget, DIFFTEST_JOBS=2, DIFFTEST_GRAFT=build/san/graft for sanitizers,
#                   DIFFTEST_FLAGS=--brief: failures by cause into build/difftest/causes.txt);
#                   failures in build/difftest/failures; docs/difftest.md
#   make bench      load/save benchmark on a generated ~100 MB model, the engine
#                   per node at 10k-1M nodes, decision tree vs rules in turn vs
#                   the interpreter, graftc on 5000 rules, the --rules loop
#   make bench-corpus  graft optimize against ONNX Runtime's session creation
#                   and cp on every corpus torch model, interleaved (BENCH_REPS=5)
#   make bench-llama   a LLaMA-style decoder: graft against ONNX Runtime's levels
#   make bench-big     models of 0.1-2.7 GB: graft against cp and ONNX Runtime

CC       ?= cc
BUILD    ?= build
GEN      := $(BUILD)/gen
OPT      ?= -O2
CFLAGS   ?= $(OPT) -g
WARN     := -Wall -Wextra -Wno-unused-parameter
# Includes name their layer: a header of another folder by its path from the
# repository root ("ir/ir.h", "runtime/eval/eval.h"), a generated one as
# "gen/NAME.h" (under $(BUILD)); only a header of the same folder goes bare.
CPPFLAGS += -I. -I$(BUILD) -D_GNU_SOURCE
# -fPIC: the same objects make libgraft.a and libgraft.so (the Python module's);
# with -fno-semantic-interposition the code is what the compiler's default
# -fPIE makes (calls within the library stay direct and inlinable).
PIC      := -fPIC -fno-semantic-interposition
ALLCFLAGS = -std=c11 $(WARN) $(CFLAGS) $(PIC) $(CPPFLAGS) -MMD -MP
LDLIBS   += -lprotobuf-c -lm
GRAFT_LIBS := -ljansson
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null || echo -lcheck -lsubunit -lrt -lm -pthread)

ONNX_PROTO_DIR ?= /usr/include/onnx
DEB_PACKAGES := re2c lemon protobuf-c-compiler libprotobuf-c-dev check pkg-config \
                libonnx-dev libonnx-testdata python3-onnx clang libclang-rt-14-dev \
                libjansson-dev libgraphviz-dev chromium

all: $(BUILD)/graft $(BUILD)/graft-html $(BUILD)/libgraft.so $(BUILD)/graft-tests $(BUILD)/graft-conformance $(if $(wildcard compiler/graftc.c),$(BUILD)/graftc)
.SECONDEXPANSION:
.PHONY: all test test-html bench-html check-layers demo deps ort-gate ort-tools difftest sanitize debug valgrind fuzz-load fuzz-text fuzz-dsl fuzz-rules fuzz-graph bench bench-corpus bench-big bench-llama clean \
        install example-custom-rules

# --- generated sources -------------------------------------------------------
# protoc-c bindings for the installed onnx.proto (never copied into the repo).
$(GEN)/onnx.pb-c.c $(GEN)/onnx.pb-c.h: $(ONNX_PROTO_DIR)/onnx.proto
	@mkdir -p $(GEN)
	protoc-c --c_out=$(GEN) -I$(ONNX_PROTO_DIR) $(ONNX_PROTO_DIR)/onnx.proto

# ONNX text form: re2c lexer and Lemon grammar.
$(GEN)/text_lexer.c: ir/text_lexer.re
	@mkdir -p $(GEN)
	re2c -W --no-generation-date -o $@ $<
$(GEN)/text_grammar.c $(GEN)/text_grammar.h: ir/text_grammar.y
	@mkdir -p $(GEN)
	cp ir/text_grammar.y $(GEN)/text_grammar.y
	lemon -q -d$(GEN) -T/usr/share/lemon/lempar.c $(GEN)/text_grammar.y
	@touch $(GEN)/text_grammar.c $(GEN)/text_grammar.h

# Kernel families: each runtime/eval/kernels/<family>.c exports ev_kernels_<family>[].
$(GEN)/kernel_families.h: $(wildcard runtime/eval/kernels/*.c) Makefile
	@mkdir -p $(GEN)
	@printf '/* Generated by the Makefile from the files in runtime/eval/kernels/; DO NOT EDIT. */\n' > $@.tmp
	@for f in $(KERNEL_FAMILIES); do printf 'FAMILY(%s)\n' $$f >> $@.tmp; done
	@cmp -s $@.tmp $@ && rm $@.tmp || mv $@.tmp $@

# The rule language: re2c lexer and Lemon grammar.
$(GEN)/dsl_lexer.c: dsl/lexer.re
	@mkdir -p $(GEN)
	re2c -W --no-generation-date -o $@ $<
$(GEN)/dsl_grammar.c $(GEN)/dsl_grammar.h: dsl/grammar.y
	@mkdir -p $(GEN)
	cp dsl/grammar.y $(GEN)/dsl_grammar.y
	lemon -q -d$(GEN) -T/usr/share/lemon/lempar.c $(GEN)/dsl_grammar.y
	@touch $(GEN)/dsl_grammar.c $(GEN)/dsl_grammar.h  # lemon keeps an unchanged header's date

GEN_HDRS := $(GEN)/onnx.pb-c.h $(GEN)/kernel_families.h $(if $(wildcard dsl/grammar.y),$(GEN)/dsl_grammar.h) $(if $(wildcard ir/text_grammar.y),$(GEN)/text_grammar.h)

# --- libraries ----------------------------------------------------------------
# One library per stack of layers, each needing only those below it (the
# order on a link line):
#   libgraft-tools.a   what the commands add over the engine: rules files loaded
#                      at run time (runtime/engine/rw_interp.c), whole-model runs
#                      and the ONNX conformance runner (runtime/eval/run.c,
#                      conformance.c), graft verify (runtime/verify/) and the
#                      commands as library calls (runtime/api/)
#   libgraft-engine.a  what an optimizer links: the evaluator and its kernels
#                      (runtime/eval/), inference (infer/), the memory plan
#                      (plan/), folding, the rewrite engine, the builder API and
#                      the audit (engine/), opset conversion (convert/) and the
#                      library's compiled rule sets
#   libgraft-dsl.a     dsl/, the rule language (graftc's front end; the engine
#                      takes only its level names and opset forms, ast.c and
#                      opset_forms.c)
#   libgraft-ir.a      ir/, the ground floor (its protobuf and text parser)
# libgraft.a and libgraft.so (the Python module's) hold them all: the library
# for users.  A program linking libgraft.a gets only the objects it calls, so
# an optimizer of compiled rule sets gets no rule-language front end either
# (graftc's sets reach the interpreter by a weak reference).
IR_SRCS  := $(filter-out %_main.c,$(wildcard ir/*.c))
DSL_SRCS := $(wildcard dsl/*.c) \
            $(if $(wildcard dsl/lexer.re),$(GEN)/dsl_lexer.c) \
            $(if $(wildcard dsl/grammar.y),$(GEN)/dsl_grammar.c)
# runtime/'s parts, in their order (runtime/README.md); cli/ and report/, the
# programs, are in no library.
RT_SRCS  := $(wildcard runtime/eval/*.c runtime/eval/kernels/*.c runtime/infer/*.c runtime/plan/*.c runtime/engine/*.c runtime/convert/*.c runtime/verify/*.c runtime/api/*.c)
KERNEL_FAMILIES := $(patsubst runtime/eval/kernels/%.c,%,$(filter-out runtime/eval/kernels/registry.c,$(wildcard runtime/eval/kernels/*.c)))
# The rule library: graftc compiles each level directory of rules/ into one
# rule set (build/gen/rules_basic.c exports graft_rules_basic); the rule
# files' own level lines decide the levels.
RULE_SETS := basic extended
RULE_SRCS := $(if $(wildcard compiler/graftc.c),$(patsubst %,$(GEN)/rules_%.c,$(RULE_SETS)))
# each set's rules text (for --why and --match-each) in a file of its own
RULE_TEXTS := $(if $(wildcard compiler/graftc.c),$(patsubst %,$(GEN)/rules_%_sources.c,$(RULE_SETS)))
GEN_SRCS := $(GEN)/onnx.pb-c.c $(RULE_SRCS) $(RULE_TEXTS) \
            $(if $(wildcard ir/text_lexer.re),$(GEN)/text_lexer.c) \
            $(if $(wildcard ir/text_grammar.y),$(GEN)/text_grammar.c)
LIB_SRCS := $(IR_SRCS) $(RT_SRCS) $(GEN_SRCS) $(DSL_SRCS)
IRLIB_SRCS := $(IR_SRCS) $(filter-out $(RULE_SRCS) $(RULE_TEXTS),$(GEN_SRCS))
TOOLS_SRCS := runtime/engine/rw_interp.c runtime/eval/run.c runtime/eval/conformance.c \
              $(wildcard runtime/verify/*.c runtime/api/*.c)
ENGINE_SRCS := $(filter-out $(TOOLS_SRCS),$(RT_SRCS)) $(RULE_SRCS) $(RULE_TEXTS)

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(patsubst $(GEN)/%,gen/%,$(1)))
LIB_OBJS := $(call obj,$(LIB_SRCS))

# Objects are remade when the compiler or its flags change (the line in
# $(BUILD)/flags, rewritten only when it differs).
FLAGS_LINE := $(CC) $(CFLAGS) $(PIC) $(CPPFLAGS)
$(shell mkdir -p $(BUILD) && echo '$(FLAGS_LINE)' | cmp -s - $(BUILD)/flags || echo '$(FLAGS_LINE)' > $(BUILD)/flags)

$(BUILD)/obj/%.o: %.c $(BUILD)/flags | $(GEN_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(ALLCFLAGS) -c -o $@ $<
# The elementwise kernels' loops (a weight times a per-channel factor, as the
# saver computes Conv+BN's folded weights) are ones GCC's -O2 cost model leaves
# scalar; its -O3 model vectorizes them.  Exact all the same: elementwise, no
# reassociation.  Only where the compiler takes the flag (clang does not).
VECTORIZE := $(shell $(CC) -fvect-cost-model=dynamic -Werror -x c -c /dev/null -o /dev/null 2>/dev/null && echo -fvect-cost-model=dynamic)
$(call obj,runtime/eval/kernels/binary.c runtime/eval/kernels/unary.c): ALLCFLAGS += $(VECTORIZE)
# Generated code is not ours: compile it without our extra warnings.
$(BUILD)/obj/gen/%.o: $(GEN)/%.c $(BUILD)/flags | $(GEN_HDRS)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 $(CFLAGS) $(PIC) $(CPPFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/libgraft.a: $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^
# The shared library the Python module loads (python/graft/, ctypes): the
# same objects, its dependencies linked in by name.
$(BUILD)/libgraft.so: $(LIB_OBJS)
	$(CC) $(CFLAGS) -shared -Wl,-soname,libgraft.so -o $@ $^ $(LDFLAGS) $(LDLIBS) $(GRAFT_LIBS)
$(BUILD)/libgraft-ir.a: $(call obj,$(IRLIB_SRCS))
	@rm -f $@
	ar rcs $@ $^
$(BUILD)/libgraft-dsl.a: $(call obj,$(DSL_SRCS))
	@rm -f $@
	ar rcs $@ $^
$(BUILD)/libgraft-engine.a: $(call obj,$(ENGINE_SRCS))
	@rm -f $@
	ar rcs $@ $^
$(BUILD)/libgraft-tools.a: $(call obj,$(TOOLS_SRCS))
	@rm -f $@
	ar rcs $@ $^
LAYER_LIBS := $(patsubst %,$(BUILD)/libgraft-%.a,tools engine dsl ir)

# graftc: the rule compiler; links dsl/ and ir/ only.
$(BUILD)/graftc: $(call obj,compiler/graftc.c compiler/codegen.c) $(BUILD)/libgraft-dsl.a $(BUILD)/libgraft-ir.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS)

# Matchers generated from the rule library, regenerated when a rule file or
# graftc changes (graftc rewrites the file only when its text changes, so
# an unchanged result compiles nothing).  They are ours: full warnings.
$(RULE_SRCS): $(GEN)/rules_%.c: $(BUILD)/graftc $$(wildcard rules/$$*/*.rules)
	@mkdir -p $(GEN)
	$(BUILD)/graftc -n $* -o $@ --sources $(GEN)/rules_$*_sources.c $(sort $(wildcard rules/$*/*.rules))
# the same graftc run writes a set's rules text; run again if that file is gone
$(RULE_TEXTS): $(GEN)/rules_%_sources.c: $(GEN)/rules_%.c
	@test -f $@ || $(BUILD)/graftc -n $* -o $< --sources $@ $(sort $(wildcard rules/$*/*.rules))
$(call obj,$(RULE_SRCS) $(RULE_TEXTS)): $(BUILD)/obj/gen/%.o: $(GEN)/%.c $(BUILD)/flags | $(GEN_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(ALLCFLAGS) -c -o $@ $<

# --- programs ----------------------------------------------------------------
# The graft binary starts in about what /bin/true takes: linked statically (libc,
# libm, protobuf-c and jansson included), the kernel maps one file and there is
# no dynamic loader, no library to map and no relocation to apply (issue 13;
# GRAFT_LINK= links as before).
GRAFT_LINK ?= -static
$(BUILD)/graft: $(call obj,runtime/cli/graft.c runtime/cli/progress.c runtime/report/html_report.c) $(BUILD)/libgraft.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDFLAGS) $(GRAFT_LINK) $(LDLIBS) $(GRAFT_LIBS)

# graft-html: the HTML audit report (graft optimize --html runs it).  Linked
# dynamically: Graphviz (libgvc, which lays the drawings out) loads its
# plugins at run time.  The page's CSS and JS are embedded from
# runtime/report/report.{css,js}.
GVC_CFLAGS := $(shell pkg-config --cflags libgvc 2>/dev/null)
GVC_LIBS   := $(shell pkg-config --libs libgvc 2>/dev/null || echo -lgvc -lcgraph -lcdt)
$(GEN)/report_assets.c: runtime/report/report.css runtime/report/report.js
	@mkdir -p $(GEN)
	@{ printf '/* Generated by the Makefile from runtime/report/report.{css,js}; DO NOT EDIT. */\n'; \
	  for a in css js; do printf 'const char graft_html_%s[] =\n' $$a; \
	  sed 's/\\/\\\\/g; s/"/\\"/g; s/^/"/; s/$$/\\n"/' runtime/report/report.$$a; printf ';\n'; done; } > $@
$(call obj,runtime/report/graft_html.c): CPPFLAGS += $(GVC_CFLAGS)
$(BUILD)/graft-html: $(call obj,runtime/report/graft_html.c $(GEN)/report_assets.c) $(BUILD)/libgraft.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS) $(GRAFT_LIBS) $(GVC_LIBS)

# the conformance runner: the evaluator and the runner, from the layer libraries
$(BUILD)/graft-conformance: $(call obj,tests/conformance_main.c) $(LAYER_LIBS)
	$(CC) $(CFLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS) $(GRAFT_LIBS)

# --- tests: one tests/check_<area>.c per area, each exporting suite_<area>() --
# tests/rules/*.rules: rules only the tests use (graft_rules_test), for what
# graftc compiles that the library's rules do not exercise.
TEST_RULES := $(if $(wildcard tests/rules/*.rules),$(GEN)/rules_test.c)
$(GEN)/rules_test.c: $(BUILD)/graftc $(wildcard tests/rules/*.rules)
	@mkdir -p $(GEN)
	$(BUILD)/graftc -n test -o $@ $(sort $(wildcard tests/rules/*.rules))
$(BUILD)/obj/gen/rules_test.o: $(GEN)/rules_test.c $(BUILD)/flags | $(GEN_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(ALLCFLAGS) -c -o $@ $<
TEST_SRCS := $(wildcard tests/check_*.c)
SUITES    := $(patsubst tests/check_%.c,%,$(TEST_SRCS))
$(GEN)/suites.h: $(TEST_SRCS) Makefile
	@mkdir -p $(GEN)
	@printf '/* Generated by the Makefile from tests/check_*.c; DO NOT EDIT. */\n' > $@.tmp
	@for s in $(SUITES); do printf 'SUITE(%s)\n' $$s >> $@.tmp; done
	@cmp -s $@.tmp $@ && rm $@.tmp || mv $@.tmp $@
$(call obj,tests/runner.c): $(GEN)/suites.h
# tests/fuzz/graph_gen.c: the graph fuzzer's harness, whose crashers
# check_fuzzcases.c replays.
$(BUILD)/graft-tests: $(call obj,tests/runner.c tests/testutil.c tests/fuzz/graph_gen.c $(TEST_SRCS) $(TEST_RULES)) $(BUILD)/libgraft.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS) $(GRAFT_LIBS) $(CHECK_LIBS)

# tests/python/: the Python module over this build's libgraft.so, with Debian's
# python3 (python3-onnx, python3-numpy).  A sanitized library loads into
# python3 with the sanitizers' runtimes preloaded (Python's own leaks at exit
# not reported).
PYTHON ?= /usr/bin/python3
SANITIZED := $(findstring -fsanitize,$(CFLAGS) $(LDFLAGS))
SAN_PRELOAD = $(wildcard $(foreach r,asan ubsan,$(shell $(CC) -print-file-name=lib$(r).so)))
test: $(BUILD)/graft-tests $(BUILD)/graft $(BUILD)/graft-html $(BUILD)/libgraft.so $(if $(wildcard compiler/graftc.c),$(BUILD)/graftc)
	GRAFT=$(abspath $(BUILD)/graft) GRAFTC=$(abspath $(BUILD)/graftc) $(BUILD)/graft-tests
	$(if $(SANITIZED),LD_PRELOAD="$(SAN_PRELOAD)" ASAN_OPTIONS=detect_leaks=0) GRAFT=$(abspath $(BUILD)/graft) \
	  GRAFT_LIB=$(abspath $(BUILD)/libgraft.so) $(PYTHON) tests/python/test_graft.py
	$(if $(SANITIZED),LD_PRELOAD="$(SAN_PRELOAD)" ASAN_OPTIONS=detect_leaks=0) GRAFT_BUILD=$(abspath $(BUILD)) \
	  GRAFT_LIB=$(abspath $(BUILD)/libgraft.so) $(PYTHON) tests/readme_test.py
	@$(MAKE) --no-print-directory test-html

# The HTML audit report in headless Chromium (skipped with a message when
# chromium is absent); with the corpus, on its BERT too.
HTML_TEST_MODELS := examples/tiny_cnn.onnx $(wildcard ../shared/corpus/torch/bert_h128_l2/raw/model.onnx)
test-html: $(BUILD)/graft $(BUILD)/graft-html
	/usr/bin/python3 tests/html/browser_test.py $(BUILD)/graft $(BUILD)/html-test $(HTML_TEST_MODELS)

# Every corpus model's HTML report in headless Chromium, timed (BENCHMARKS.md).
bench-html: $(BUILD)/graft $(BUILD)/graft-html
	/usr/bin/python3 tests/bench/html_pages.py $(BUILD)/graft $${GRAFT_CORPUS:-../shared/corpus} $(BUILD)/bench-html $${BENCH_REPS:-5}

# The layers hold (tests/check_layers.py): every include of another folder's
# header written with its layer path, no upward include (ir/ <- dsl/ <-
# compiler/, runtime/ in the order above), no circle of files calling each
# other (read from build/obj with nm); first its self-test on planted problems.
check-layers: all
	python3 tests/check_layers.py --self-test
	python3 tests/check_layers.py

demo: $(BUILD)/graft
	$(BUILD)/graft info examples/tiny_cnn.onnx
	$(BUILD)/graft optimize examples/tiny_cnn.onnx -o $(BUILD)/tiny_cnn.opt.onnx --report $(BUILD)/tiny_cnn.report.json
	$(BUILD)/graft compare examples/tiny_cnn.onnx $(BUILD)/tiny_cnn.opt.onnx --runs 3
	@echo "optimized model: $(BUILD)/tiny_cnn.opt.onnx; audit: $(BUILD)/tiny_cnn.report.json"

# --- install, and an outside optimizer built against the install --------------
# libgraft.a holds the IR, evaluator, engine and the library's rule sets, so it
# is all an optimizer links (plus what graft.pc lists).  The headers are the
# ones rewrite.h and rw_gen.h (what graftc-generated code includes) pull in,
# installed under their layer paths (include/graft/runtime/engine/rewrite.h),
# as the sources and generated code include them.
PREFIX ?= /usr/local
INSTALL_HDRS := runtime/api/graft_api.h runtime/engine/audit.h ir/outfile.h runtime/eval/run.h runtime/verify/verify.h \
                runtime/engine/rewrite.h runtime/engine/rw_gen.h runtime/engine/rw_interp.h runtime/engine/rules.h runtime/eval/eval.h runtime/engine/fold.h \
                ir/ir.h ir/diag.h ir/opschema.h ir/ops.def
# The Python module goes where Debian's python3 looks for PREFIX's modules
# (/usr/local/lib/python3.11/dist-packages), libgraft.so inside it (not in
# $(PREFIX)/lib, where -lgraft keeps meaning libgraft.a, as graft.pc says).
PYTHON_DIR ?= $(PREFIX)/lib/$(shell $(PYTHON) -c 'import sys; print("python%d.%d" % sys.version_info[:2])' 2>/dev/null || echo python3)/dist-packages
install: $(BUILD)/graft $(BUILD)/graft-html $(BUILD)/graftc $(BUILD)/libgraft.a $(BUILD)/libgraft.so runtime/graft.pc.in
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include/graft \
	  $(DESTDIR)$(PYTHON_DIR)/graft
	install -m 755 $(BUILD)/graft $(BUILD)/graftc $(BUILD)/graft-html $(DESTDIR)$(PREFIX)/bin/
	install -m 644 $(BUILD)/libgraft.a $(DESTDIR)$(PREFIX)/lib/
	install -m 644 python/graft/__init__.py $(DESTDIR)$(PYTHON_DIR)/graft/
	install -m 755 $(BUILD)/libgraft.so $(DESTDIR)$(PYTHON_DIR)/graft/
	for h in $(INSTALL_HDRS); do install -D -m 644 $$h $(DESTDIR)$(PREFIX)/include/graft/$$h; done
	for d in $(RULE_SETS); do install -d $(DESTDIR)$(PREFIX)/share/graft/rules/$$d && \
	  install -m 644 rules/$$d/*.rules $(DESTDIR)$(PREFIX)/share/graft/rules/$$d/; done
	sed 's|@PREFIX@|$(PREFIX)|g' runtime/graft.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/graft.pc

EXAMPLE_PREFIX := $(abspath $(BUILD))/prefix
EXAMPLE_OUT    := $(abspath $(BUILD))/example-custom-rules
example-custom-rules:
	rm -rf $(EXAMPLE_PREFIX) $(EXAMPLE_OUT)
	$(MAKE) install PREFIX=$(EXAMPLE_PREFIX)
	$(MAKE) -C examples/custom-rules PREFIX=$(EXAMPLE_PREFIX) OUT=$(EXAMPLE_OUT)
	$(EXAMPLE_OUT)/custom-opt examples/custom-rules/model.onnx $(EXAMPLE_OUT)/model.opt.onnx > $(EXAMPLE_OUT)/run.log
	@cat $(EXAMPLE_OUT)/run.log
	@grep -q '^custom .* fired' $(EXAMPLE_OUT)/run.log && ! grep '^custom .* fired 0 times' $(EXAMPLE_OUT)/run.log \
	  || { echo "example-custom-rules: not every custom rule fired"; exit 1; }
	$(EXAMPLE_PREFIX)/bin/graft compare examples/custom-rules/model.onnx $(EXAMPLE_OUT)/model.opt.onnx
	$(MAKE) $(BUILD)/custom-opt
	$(BUILD)/custom-opt examples/custom-rules/model.onnx $(EXAMPLE_OUT)/model.layers.onnx > /dev/null
	cmp $(EXAMPLE_OUT)/model.opt.onnx $(EXAMPLE_OUT)/model.layers.onnx
	@! nm $(EXAMPLE_OUT)/custom-opt $(BUILD)/custom-opt | grep -E ' T (dsl_parse|dsl_lower|rw_rules_load|run_compare|conf_run)$$' \
	  || { echo "example-custom-rules: an optimizer of compiled rules links the rule language's front end," \
	       "the interpreter or a runner"; exit 1; }
# The same optimizer built in the tree from the layer libraries it needs
# (engine, dsl, ir; not tools): it must link, write the same model as the
# installed one, and neither may hold the rule language's parser or lowering,
# the interpreter, the whole-model runner or the conformance runner.
$(GEN)/rules_custom.c: examples/custom-rules/custom.rules $(BUILD)/graftc
	$(BUILD)/graftc -n custom -o $@ $<
$(BUILD)/custom-opt: $(call obj,examples/custom-rules/optimize.c $(GEN)/rules_custom.c) \
                     $(BUILD)/libgraft-engine.a $(BUILD)/libgraft-dsl.a $(BUILD)/libgraft-ir.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS) $(GRAFT_LIBS)

# --- the ONNX Runtime gate: every model graft writes must load and agree in ORT --
# Uses ../shared/tools/ort (onnxruntime-node), installed into build/ort-tools
# once; CORPUS sets too when the shared corpus exists.  See tests/ort_gate.sh.
ORT_TOOLS ?= ../shared/tools/ort
ORT_LOCAL := $(BUILD)/ort-tools
ort-tools:
	@if [ ! -d $(ORT_LOCAL)/node_modules/onnxruntime-node ]; then \
	  test -d $(ORT_TOOLS) || { echo "ort-tools: no ONNX Runtime tools at $(ORT_TOOLS)"; exit 1; }; \
	  rm -rf $(ORT_LOCAL) && cp -r $(ORT_TOOLS) $(ORT_LOCAL) && bash $(ORT_LOCAL)/install.sh; fi
ort-gate: $(BUILD)/graft $(BUILD)/nhwc-unvendor ort-tools
	GRAFT=$(BUILD)/graft bash tests/ort_gate.sh conformance $(ORT_LOCAL)
	GRAFT=$(BUILD)/graft bash tests/ort_gate.sh fixtures $(ORT_LOCAL)
	GRAFT=$(BUILD)/graft bash tests/ort_gate.sh conformance $(ORT_LOCAL) vendor
	GRAFT=$(BUILD)/graft bash tests/ort_gate.sh fixtures $(ORT_LOCAL) vendor
	GRAFT=$(BUILD)/graft bash tests/verify_ort.sh $(ORT_LOCAL) 20
	GRAFT=$(BUILD)/graft bash tests/attention_ort.sh $(ORT_LOCAL)
	GRAFT=$(BUILD)/graft bash tests/convert_gate.sh conformance $(ORT_LOCAL)
	GRAFT=$(BUILD)/graft bash tests/extdata_ort.sh $(ORT_LOCAL)
	GRAFT=$(BUILD)/graft bash tests/llama/llama_ort.sh $(ORT_LOCAL)
	GRAFT=$(BUILD)/graft bash tests/gpt2/gpt2_ort.sh $(ORT_LOCAL)
	GRAFT=$(BUILD)/graft bash tests/vit/vit_ort.sh $(ORT_LOCAL)
	@if [ -d "$${GRAFT_CORPUS:-../shared/corpus}" ]; then GRAFT=$(BUILD)/graft bash tests/ort_gate.sh corpus $(ORT_LOCAL) && \
	  GRAFT=$(BUILD)/graft bash tests/ort_gate.sh corpus $(ORT_LOCAL) vendor && \
	  GRAFT=$(BUILD)/graft bash tests/convert_gate.sh corpus $(ORT_LOCAL) && \
	  GRAFT=$(BUILD)/graft bash tests/layout_gate.sh $(ORT_LOCAL) && \
	  GRAFT=$(BUILD)/graft UNVENDOR=$(BUILD)/nhwc-unvendor bash tests/nhwc_gate.sh $(ORT_LOCAL); \
	else echo "ort-gate: no corpus; corpus sets skipped"; fi

# --- make difftest: random graphs, graft optimize vs ONNX Runtime (docs/difftest.md) --
# Exit 1 on a crash, an ORT refusal or a difference not in tests/difftest/known.txt.
DIFFTEST_SEEDS   ?= 0-1999
DIFFTEST_SECONDS ?= 0
DIFFTEST_JOBS    ?= 2
DIFFTEST_CONFIGS ?= default,opset23,vendor
DIFFTEST_GRAFT   ?= $(BUILD)/graft
DIFFTEST_FLAGS   ?=
difftest: $(BUILD)/graft ort-tools
	/usr/bin/python3 tests/difftest/run.py --seeds $(DIFFTEST_SEEDS) --seconds $(DIFFTEST_SECONDS) \
	  --jobs $(DIFFTEST_JOBS) --configs $(DIFFTEST_CONFIGS) --graft $(DIFFTEST_GRAFT) --ort $(ORT_LOCAL) $(DIFFTEST_FLAGS) \
	  --out $(BUILD)/difftest

deps:
	@missing=$$(for p in $(DEB_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing:" $$missing; \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing; \
	  else sudo apt-get update -q && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing; fi; \
	else echo "all Debian packages present"; fi

# --- sanitizers, fuzzing, benchmarks ------------------------------------------
# GRAFT_DEBUG: the engine checks that failed matches change nothing and
# validates the IR after every rewrite (see docs/engine.md).
SAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined -DGRAFT_DEBUG
# The sanitized, self-checking build runs several times slower: Check's
# per-test timeouts are scaled to match (graft verify over the whole library
# is the longest test).  Linked dynamically: ASan does not link statically.
sanitize:
	CK_TIMEOUT_MULTIPLIER=3 $(MAKE) BUILD=build/san GRAFT_LINK= CFLAGS="$(SAN_FLAGS)" LDFLAGS="-fsanitize=address,undefined" test
debug:
	$(MAKE) BUILD=build/debug CFLAGS="-O0 -g -DGRAFT_DEBUG" test

# valgrind: every suite in one process (CK_FORK=no), leaks and errors fatal.
valgrind: $(BUILD)/graft-tests $(BUILD)/graft
	GRAFT_SKIP_HEAVY=1 CK_FORK=no GRAFT=$(abspath $(BUILD)/graft) valgrind -q --leak-check=full \
	  --errors-for-leak-kinds=definite,indirect --error-exitcode=9 $(BUILD)/graft-tests

FUZZ_SECONDS ?= 60
FUZZ_FLAGS := -O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
fuzz-load:
	$(MAKE) BUILD=build/fuzz CC=clang CFLAGS="$(FUZZ_FLAGS)" build/fuzz/libgraft.a
	@mkdir -p build/fuzz/corpus-load
	clang $(FUZZ_FLAGS) -fsanitize=fuzzer $(CPPFLAGS) -Ibuild/fuzz -o build/fuzz/fuzz-load tests/fuzz/fuzz_load.c build/fuzz/libgraft.a $(LDLIBS) $(GRAFT_LIBS)
	build/fuzz/fuzz-load -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -timeout=10 -rss_limit_mb=2048 -artifact_prefix=build/fuzz/ build/fuzz/corpus-load tests/fuzz/load-seeds

FUZZ_TEXT_SECONDS ?= 60
fuzz-text:
	$(MAKE) BUILD=build/fuzz CC=clang CFLAGS="$(FUZZ_FLAGS)" build/fuzz/libgraft-ir.a
	@mkdir -p build/fuzz/corpus-text
	clang $(FUZZ_FLAGS) -fsanitize=fuzzer $(CPPFLAGS) -Ibuild/fuzz -o build/fuzz/fuzz-text tests/fuzz/fuzz_text.c build/fuzz/libgraft-ir.a $(LDLIBS)
	build/fuzz/fuzz-text -max_total_time=$(FUZZ_TEXT_SECONDS) -max_len=16384 -timeout=10 -rss_limit_mb=2048 -artifact_prefix=build/fuzz/ build/fuzz/corpus-text tests/fuzz/text-seeds

FUZZ_DSL_SECONDS ?= 60
fuzz-dsl:
	$(MAKE) BUILD=build/fuzz CC=clang CFLAGS="$(FUZZ_FLAGS)" build/fuzz/libgraft-dsl.a build/fuzz/libgraft-ir.a
	@mkdir -p build/fuzz/corpus-dsl
	clang $(FUZZ_FLAGS) -fsanitize=fuzzer $(CPPFLAGS) -Ibuild/fuzz -o build/fuzz/fuzz-dsl tests/fuzz/fuzz_dsl.c compiler/codegen.c build/fuzz/libgraft-dsl.a build/fuzz/libgraft-ir.a $(LDLIBS)
	build/fuzz/fuzz-dsl -max_total_time=$(FUZZ_DSL_SECONDS) -max_len=8192 -timeout=10 -rss_limit_mb=2048 -artifact_prefix=build/fuzz/ build/fuzz/corpus-dsl tests/fuzz/dsl-seeds

FUZZ_RULES_SECONDS ?= 60
fuzz-rules:
	$(MAKE) BUILD=build/fuzz CC=clang CFLAGS="$(FUZZ_FLAGS)" build/fuzz/libgraft.a
	@mkdir -p build/fuzz/corpus-rules
	clang $(FUZZ_FLAGS) -fsanitize=fuzzer $(CPPFLAGS) -Ibuild/fuzz -o build/fuzz/fuzz-rules tests/fuzz/fuzz_rules.c build/fuzz/libgraft.a $(LDLIBS) $(GRAFT_LIBS)
	build/fuzz/fuzz-rules -max_total_time=$(FUZZ_RULES_SECONDS) -max_len=8192 -timeout=10 -rss_limit_mb=2048 -artifact_prefix=build/fuzz/ build/fuzz/corpus-rules tests/fuzz/dsl-seeds

# The graph fuzzer: tests/fuzz/graph_gen.c builds models from the op schema
# table out of the input bytes and runs them through the whole pipeline.
# A crash input is written to build/fuzz/crash-*; FUZZ_GRAPH_DUMP=model.onnx
# build/fuzz/fuzz-graph crash-* writes the model it builds.
FUZZ_GRAPH_SECONDS ?= 60
fuzz-graph:
	$(MAKE) BUILD=build/fuzz CC=clang CFLAGS="$(FUZZ_FLAGS)" build/fuzz/libgraft.a
	@mkdir -p build/fuzz/corpus-graph
	clang $(FUZZ_FLAGS) -fsanitize=fuzzer $(CPPFLAGS) -Ibuild/fuzz -o build/fuzz/fuzz-graph tests/fuzz/fuzz_graph.c tests/fuzz/graph_gen.c build/fuzz/libgraft.a $(LDLIBS) $(GRAFT_LIBS)
	build/fuzz/fuzz-graph -max_total_time=$(FUZZ_GRAPH_SECONDS) -max_len=4096 -timeout=10 -rss_limit_mb=2048 -artifact_prefix=build/fuzz/ build/fuzz/corpus-graph tests/fuzz/graph-seeds

BENCH_RULES_MODELS := $(wildcard $(addprefix ../shared/corpus/torch/,resnet18/raw/model.onnx bert_h128_l2/raw/model.onnx vit_b_16_narrow/raw/model.onnx))
BENCH_LIBRARY_MODELS := $(wildcard $(addprefix ../shared/corpus/torch/,resnet18/raw/model.onnx bert_h128_l2/raw/model.onnx vit_b_16_narrow/raw/model.onnx swin_t_narrow/raw/model.onnx))
bench: $(BUILD)/bench-load $(BUILD)/bench-engine $(BUILD)/bench-tree $(BUILD)/bench-attention $(BUILD)/graftc $(BUILD)/graft
	$(BUILD)/bench-load
	$(BUILD)/bench-engine
	$(BUILD)/bench-attention
	$(BUILD)/bench-tree $(GEN)/rules100.rules
	sh tests/bench/dsl_5000.sh $(BUILD)/graftc
	sh tests/bench/dsl_large.sh $(BUILD)
	sh tests/bench/rules_loop.sh $(BUILD)/graft $(BENCH_RULES_MODELS)
	sh tests/bench/library_size.sh $(BUILD)/graft $(BUILD)/graftc examples/tiny_cnn.onnx $(BENCH_LIBRARY_MODELS)
# graft's whole process against ONNX Runtime's session creation at `basic` and
# `cp`, every corpus torch model, interleaved, medians (BENCHMARKS.md, issue 13).
bench-corpus: $(BUILD)/graft
	@if [ ! -d $(ORT_LOCAL)/node_modules/onnxruntime-node ]; then \
	  test -d $(ORT_TOOLS) || { echo "bench-corpus: no ONNX Runtime tools at $(ORT_TOOLS)"; exit 1; }; \
	  rm -rf $(ORT_LOCAL) && cp -r $(ORT_TOOLS) $(ORT_LOCAL) && bash $(ORT_LOCAL)/install.sh; fi
	bash tests/bench/corpus_speed.sh $(BUILD)/graft $${GRAFT_CORPUS:-../shared/corpus} $(ORT_LOCAL) $${BENCH_REPS:-5}
# Models of 0.1-2.7 GB (BENCHMARKS.md, issue 29): exported once into
# BIG_DIR by tests/bench/export_big.py (python3-torch, not installed by make
# deps; about 6 GB of disk), then graft against cp and ORT's creation.
BIG_DIR ?= $(BUILD)/bench-big
bench-big: $(BUILD)/graft ort-tools
	bash tests/bench/big_table.sh $(BUILD)/graft $(BIG_DIR) $(ORT_LOCAL) $${BENCH_REPS:-3}
# The LLaMA-style decoder table (BENCHMARKS.md, issue 27): needs Debian's
# python3-torch to export the models (not installed by make deps).
bench-llama: $(BUILD)/graft ort-tools
	bash tests/bench/llama_table.sh $(BUILD)/graft $(ORT_LOCAL)
# 100 generated rules: graftc's decision tree against the rules in turn.
$(GEN)/rules_bench100.c: tests/bench/gen_rules100.sh $(BUILD)/graftc
	@mkdir -p $(GEN)
	sh tests/bench/gen_rules100.sh > $(GEN)/rules100.rules
	$(BUILD)/graftc -n bench100 -o $@ $(GEN)/rules100.rules
$(BUILD)/bench-tree: $(call obj,tests/bench/bench_tree.c $(GEN)/rules_bench100.c) $(BUILD)/libgraft.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS) $(GRAFT_LIBS)
$(BUILD)/bench-engine: $(call obj,tests/bench/bench_engine.c) $(BUILD)/libgraft.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS) $(GRAFT_LIBS)
$(BUILD)/bench-load: $(call obj,tests/bench/bench_load.c) $(BUILD)/libgraft.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS) $(GRAFT_LIBS)
$(BUILD)/bench-attention: $(call obj,tests/bench/bench_attention.c) $(BUILD)/libgraft.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS) $(GRAFT_LIBS)
# tests/nhwc_gate.sh: --layout nhwc outputs with NhwcConv written back, for ONNX Runtime's CPU provider
$(BUILD)/nhwc-unvendor: $(call obj,tests/nhwc_unvendor.c) $(BUILD)/libgraft.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS) $(GRAFT_LIBS)

clean:
	rm -rf build

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)

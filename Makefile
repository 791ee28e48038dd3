# nf-ila-rtcache top-level Makefile.
#
# Quick start on a fresh Debian machine:   make demo    make check
# Install:     ./autogen.sh && ./configure && make && sudo make install
# Packagers:   ./configure [--with-kbuild=DIR|--without-kbuild] [--with-xtlibdir=DIR]
#              make && make install DESTDIR=...      (make help: every target)
#
# config.mk is written by ./configure; every target that builds needs it and
# bootstraps it (autogen.sh + configure) on first use, stopping on failure.

TOP := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
NOCONFIG_GOALS := deps help clean distclean dist
# Everything else needs config.mk. It is included for real (no -include):
# when it is missing or out of date make runs the bootstrap rule below
# (autogen.sh + configure; `make check/demo/bench` install the packages
# first), and when that fails make stops there, naming what is missing.
ifneq ($(filter-out $(NOCONFIG_GOALS),$(or $(MAKECMDGOALS),all)),)
include $(TOP)/config.mk
# A config.mk that is complete and up to date has configure's marker. (While
# it is missing or older than config.mk.in make remakes it and starts over.)
ifneq ($(wildcard $(TOP)/config.mk),)
ifneq ($(NFILR_CONFIGURED),yes)
ifeq ($(shell test $(TOP)/config.mk -nt $(TOP)/config.mk.in && echo current),current)
$(error config.mk was not written by this tree's ./configure (no NFILR_CONFIGURED): run ./autogen.sh && ./configure (or make distclean))
endif
endif
endif
endif

V ?= 0
Q := $(if $(filter 1,$(V)),,@)

# ---- kernels ---------------------------------------------------------------
# KERNELS: releases to build modules for (each needs /lib/modules/<rel>/build).
# Default: the one configure chose. `make check` and `make bench` default to
# every installed kernel that has both headers and an image (the test matrix).
INSTALLED_KERNELS := $(foreach r,$(patsubst /lib/modules/%/build/Makefile,%,\
	$(wildcard /lib/modules/*/build/Makefile)),$(if $(wildcard /boot/vmlinuz-$(r)),$(r)))
ifneq ($(filter check stress,$(MAKECMDGOALS)),)
KERNELS ?= $(or $(INSTALLED_KERNELS),$(KERNELRELEASE_CONFIGURED))
endif
KERNELS ?= $(KERNELRELEASE_CONFIGURED)
# Second kernel of the test matrix, installed by `make deps` for check/bench
# (bookworm-backports). Empty it to test only what is installed.
TEST_KERNELS ?= 6.12
kbuild_for = $(if $(filter $(1),$(KERNELRELEASE_CONFIGURED)),$(KBUILD_DIR),/lib/modules/$(1)/build)

KSRC   := $(wildcard $(TOP)/kernel/*.c) $(wildcard $(TOP)/kernel/*.h) $(TOP)/kernel/Kbuild
# the modules: kernel/Kbuild's obj-m line
KMODS  := $(patsubst %.o,%,$(shell sed -n 's/^obj-m *:= *//p' $(TOP)/kernel/Kbuild))
KHDRS  := $(wildcard $(TOP)/include/uapi/linux/*.h $(TOP)/include/uapi/linux/netfilter/*.h $(TOP)/include/common/*.h)

# ---- userspace ---------------------------------------------------------------
WARN      := -Wall -Wextra -Wno-missing-field-initializers
CXXSTD    := -std=c++20
OPT       ?= -O2 -g
UCPPFLAGS := -I$(TOP)/include -I$(TOP)/include/uapi -I$(TOP)/userspace/lib
PLUGIN_SRC := $(wildcard $(TOP)/xtables/libxt_*.cpp)
PLUGINS    := $(PLUGIN_SRC:.cpp=.so)
MANFRAGS   := $(wildcard $(TOP)/xtables/libxt_*.man)
MANPAGE    := $(TOP)/build/man/nf-ila-rtcache.8
ULIB_SRC   := $(wildcard $(TOP)/userspace/lib/*.cpp)
ULIB_OBJ   := $(patsubst $(TOP)/userspace/lib/%.cpp,$(TOP)/build/ulib/%.o,$(ULIB_SRC))
ULIB       := $(TOP)/build/ulib/libnfilr.a
TOOLS_SRC  := $(wildcard $(TOP)/userspace/*.cpp)
TOOLS      := $(patsubst $(TOP)/userspace/%.cpp,$(TOP)/build/bin/%,$(TOOLS_SRC))
INSTALL_TOOLS := $(TOOLS)
# clients of the test suites (tests/tools: ila_nltest): built, not installed
TEST_TOOLS_SRC := $(wildcard $(TOP)/tests/tools/*.cpp)
TEST_TOOLS := $(patsubst $(TOP)/tests/tools/%.cpp,$(TOP)/build/bin/%,$(TEST_TOOLS_SRC))
TOOL_MANS  := $(wildcard $(TOP)/userspace/*.8)
# the fuzz target's entry is linked into the unit tests (they replay it)
# ila-syncd (userspace/syncd): the etcd mapping-system client. Its pure
# logic (no gRPC, no netlink) is also compiled into the unit tests.
SYNCD_DIR      := $(TOP)/userspace/syncd
SYNCD_PURE_SRC := $(addprefix $(SYNCD_DIR)/,schema.cpp options.cpp cache_table.cpp status_format.cpp range_pager.cpp sync_state.cpp etcd_errors.cpp)
UNIT_SRC   := $(wildcard $(TOP)/tests/unit/*.cpp) $(TOP)/tests/fuzz/reply_fuzz.cpp $(SYNCD_PURE_SRC)
UNIT_BIN   := $(TOP)/build/unit/unit_tests
# the netlink stress generator of tests/stress/ila_stress.bats (built, not installed)
STRESS_SRC := $(wildcard $(TOP)/tests/stress/*.cpp)
STRESS_BIN := $(TOP)/build/tests/ila_stress

.PHONY: cachesim all modules userspace plugins tools man deps check unit demo bench dist \
        install install-modules install-userspace uninstall clean distclean help fuzz stress
.DEFAULT_GOAL := all

all: $(if $(KERNELS),modules) userspace cachesim

help:
	@echo 'nf-ila-rtcache: out-of-tree netfilter extensions (ILA/NPTv6, conntrack route cache).'
	@echo 'From a git clone: ./autogen.sh && ./configure && make && sudo make install'
	@echo '(make check / demo / bench install the packages and configure by themselves)'
	@echo
	@echo 'Targets:'
	@echo '  all            modules (for KERNELS) + userspace (default)'
	@echo '  modules        kernel modules into build/kmod/<release>/, one set per kernel in KERNELS'
	@echo '  userspace      iptables plugins, tools (build/bin: ilactl...), man page'
	@echo '  plugins tools man   the parts of userspace'
	@echo '  cachesim       the cache-model plugin of the benchmark VM + its guest marker tool (build/cachesim/)'
	@echo '  unit           GoogleTest unit tests on the host (FILTER=gtest-pattern)'
	@echo '  check          everything: host tests, unit, VM harness self-test, package test,'
	@echo '                 every bats suite on every kernel (SUITE=a,b FILTER=regex KERNELS="rel ..."),'
	@echo '                 the netlink stress suite last (SUITE=ila_stress alone; STRESS_SECS=60; STRESS_SEED=N replays a seed)'
	@echo '  stress         the netlink stress suite for STRESS_SECS (600) under slub_debug, per kernel'
	@echo '                 (STRESS_SEED=N replays a seed)'
	@echo '  fuzz           the netlink reply parser under libFuzzer + ASan/UBSan for FUZZ_SECS (clang)'
	@echo '  demo           the demo in a VM (first kernel of KERNELS)'
	@echo '  bench          benchmarks in an instruction-counting VM (BENCH=regex)'
	@echo '  deb            Debian packages into build/deb/ (dkms + tools, lintian)'
	@echo '  check-package  the package test alone (make deb, dkms in a fresh root, VM smoke test)'
	@echo '  dist           build/nf-ila-rtcache-VERSION.tar.gz with a generated ./configure'
	@echo '  install        modules into $$(DESTDIR)/lib/modules/<release>/extra (+ depmod),'
	@echo '                 plugins, tools, man pages (install-modules, install-userspace)'
	@echo '  uninstall      remove what install installed'
	@echo '  deps           install every Debian package the build and tests need (root)'
	@echo '  clean distclean   remove build outputs / also the configuration'
	@echo '  help           this text'
	@echo
	@echo 'Variables:'
	@echo '  KERNELS="rel ..."   kernels to build/test for (default: the configured one; check and'
	@echo '                      stress: every installed kernel with headers and an image)'
	@echo '  SUITE=a,b           check: only these suites (bats in the VM or tests/host/)'
	@echo '  FILTER=regex        check: tests whose name matches; unit: a gtest pattern'
	@echo '  BENCH=regex         bench: only these benchmarks (e.g. BENCH=ila,ilamap)'
	@echo '  CHECK_JOBS=N        check: kernels run side by side (default 2; 1 with SUITE or FILTER)'
	@echo '  SUITE_TIMEOUT=SEC   check: timeout per suite (default 2400)'
	@echo '  SLUB_DEBUG_ALL=1    check: slub_debug on every cache of every kernel'
	@echo '  RTC_LOOPS=N, RTC_TEARDOWN_LOOPS=N  check: rounds of the rtcache repetition tests'
	@echo '                      (default 50 and 20)'
	@echo '  USERNS_FILL_SECS=N  check: how long ila_userns waits for its user at memory.max (default 120)'
	@echo '  TEST_KERNELS="6.12" check/deps: extra test kernel installed from bookworm-backports'
	@echo '                      (empty: test only what is installed)'
	@echo '  FUZZ_SECS=N         fuzz: run time (default 60)'
	@echo '  DESTDIR=DIR         install: staging root;  CONFIGURE_ARGS: passed to ./configure'
	@echo '  V=1                 show the build commands'

# ---- bootstrap ---------------------------------------------------------------
# config.mk: autogen.sh (generates ./configure, checks autoconf, automake and
# pkg-config) then ./configure (checks compilers, libraries, kernel headers).
# Each names the Debian package that is missing; a failure stops make here.
BOOTSTRAP_GOALS := check demo bench stress
$(TOP)/config.mk: $(TOP)/configure.ac $(TOP)/config.mk.in
	$(Q)if [ -n "$(filter $(BOOTSTRAP_GOALS),$(MAKECMDGOALS))" ]; then \
	  $(TOP)/scripts/deps.sh $(if $(filter check,$(MAKECMDGOALS)),--kernels "$(TEST_KERNELS)") || \
	  { echo "make: *** installing the packages failed (scripts/deps.sh, see above): run 'make deps' as root"; exit 1; }; fi
	$(Q)cd $(TOP) && if [ -x config.status ] && [ -x configure ] && [ config.status -nt configure.ac ] && \
	    [ configure -nt configure.ac ]; then ./config.status --quiet; \
	  else { [ -x configure ] && [ configure -nt configure.ac ]; } || ./autogen.sh >/dev/null || \
	    { echo "make: *** ./autogen.sh failed: install the package it names above (or run 'make deps')"; exit 1; }; \
	    ./configure --quiet $(CONFIGURE_ARGS) || \
	    { echo "make: *** ./configure failed: $$(sed -n 's/^configure:[0-9]*: error: //p' config.log | tail -n 1)"; exit 1; }; fi
	$(Q)grep -q '^NFILR_CONFIGURED = yes' $@ || { echo "make: *** $@ is incomplete: run ./configure"; exit 1; }
	$(Q)touch $@

# make deps [TEST_KERNELS=6.12]: build/test packages, plus the test kernels
deps:
	$(Q)$(TOP)/scripts/deps.sh --kernels "$(TEST_KERNELS)"

# ---- kernel modules ----------------------------------------------------------
# Kbuild writes its objects next to the sources, so each kernel gets its own
# directory of links: build/kmod/<release>/.
modules: $(foreach k,$(KERNELS),$(TOP)/build/kmod/$(k)/.built)

$(TOP)/build/kmod/%/.built: $(KSRC) $(KHDRS)
	$(Q)test -e "$(call kbuild_for,$*)/Makefile" || { echo "no kernel build tree for $*: apt-get install linux-headers-$*"; exit 1; }
	$(Q)mkdir -p $(@D) && ln -sf $(TOP)/kernel/* $(@D)/
	$(Q)find -L $(@D) -maxdepth 1 -type l ! -exec test -e {} \; -delete 2>/dev/null || true
	$(Q)$(MAKE) --no-print-directory -C $(call kbuild_for,$*) M=$(@D) NFILR_TOP=$(TOP) W=1 modules
	$(Q)touch $@

# ---- userspace ---------------------------------------------------------------
userspace: plugins tools man
plugins: $(PLUGINS)
tools: $(TOOLS) $(TEST_TOOLS)
man: $(if $(MANFRAGS),$(MANPAGE))

$(TOP)/xtables/%.so: $(TOP)/xtables/%.cpp $(KHDRS)
	$(Q)echo "  CXX     $(notdir $@)"
	$(Q)$(CXX) $(CXXSTD) $(OPT) $(WARN) -fPIC -shared $(UCPPFLAGS) $(XTABLES_CFLAGS) $(CXXFLAGS) \
	  -o $@ $< $(LDFLAGS) $(XTABLES_LIBS)

$(TOP)/build/ulib/%.o: $(TOP)/userspace/lib/%.cpp $(wildcard $(TOP)/userspace/lib/*.h) $(KHDRS)
	$(Q)mkdir -p $(@D) && echo "  CXX     $(notdir $@)"
	$(Q)$(CXX) $(CXXSTD) $(OPT) $(WARN) $(UCPPFLAGS) $(MNL_CFLAGS) $(CXXFLAGS) -c -o $@ $<

$(ULIB): $(ULIB_OBJ)
	$(Q)mkdir -p $(@D) && rm -f $@ && ar rcs $@ $^

$(TOP)/build/bin/%: $(TOP)/userspace/%.cpp $(if $(ULIB_SRC),$(ULIB)) $(wildcard $(TOP)/userspace/lib/*.h) $(KHDRS)
	$(Q)mkdir -p $(@D) && echo "  CXX     $(notdir $@)"
	$(Q)$(CXX) $(CXXSTD) $(OPT) $(WARN) $(UCPPFLAGS) $(MNL_CFLAGS) $(CXXFLAGS) \
	  -DNFILR_VERSION='"$(DIST_VERSION)"' -o $@ $< \
	  $(if $(ULIB_SRC),$(ULIB)) $(LDFLAGS) $(MNL_LIBS)

$(TOP)/build/bin/%: $(TOP)/tests/tools/%.cpp $(if $(ULIB_SRC),$(ULIB)) $(wildcard $(TOP)/userspace/lib/*.h) $(KHDRS)
	$(Q)mkdir -p $(@D) && echo "  CXX     $(notdir $@)"
	$(Q)$(CXX) $(CXXSTD) $(OPT) $(WARN) $(UCPPFLAGS) $(MNL_CFLAGS) $(CXXFLAGS) -o $@ $< \
	  $(if $(ULIB_SRC),$(ULIB)) $(LDFLAGS) $(MNL_LIBS)

$(MANPAGE): $(MANFRAGS) $(TOP)/xtables/header.man.in $(TOP)/xtables/trailer.man.in
	$(Q)mkdir -p $(@D)
	$(Q){ cat $(TOP)/xtables/header.man.in; \
	  for f in $(MANFRAGS); do n=$${f##*/libxt_}; n=$${n%.man}; \
	    echo ".SS $$n"; cat $$f; done; cat $(TOP)/xtables/trailer.man.in; } > $@

# ---- cache model of the benchmark VM (bench/README.md, "Modeled cycles") ----
# the QEMU TCG plugin and the guest's marker tool; plain C, no QEMU headers
CACHESIM_DIR := $(TOP)/build/cachesim
cachesim: $(CACHESIM_DIR)/cachesim.so $(CACHESIM_DIR)/cachesim-mark

$(CACHESIM_DIR)/cachesim.so: $(TOP)/bench/cachesim.c $(TOP)/bench/cachesim.h $(TOP)/bench/qemu_plugin_api.h
	$(Q)mkdir -p $(@D) && echo "  CC      $(notdir $@)"
	$(Q)$(CC) -std=gnu11 $(OPT) $(WARN) -fPIC -shared -fvisibility=hidden $(CFLAGS) -o $@ $< $(LDFLAGS)

$(CACHESIM_DIR)/cachesim-mark: $(TOP)/bench/cachesim-mark.c
	$(Q)mkdir -p $(@D) && echo "  CC      $(notdir $@)"
	$(Q)$(CC) -std=gnu11 $(OPT) $(WARN) $(CFLAGS) -o $@ $< $(LDFLAGS)

# ---- ila-syncd ---------------------------------------------------------------
# The etcd v3 client stubs are generated at build time with protoc and
# grpc_cpp_plugin from etcd's .proto files (and those they import) into
# build/syncd/gen/. ila_syncd_bench is the load generator of make bench and
# the fleet suite: built, not installed.
ifeq ($(SYNCD),yes)
SYNCD_PROTOS   := etcd/etcdserver/etcdserverpb/rpc.proto etcd/mvcc/mvccpb/kv.proto \
		  etcd/auth/authpb/auth.proto gogoproto/gogo.proto google/api/annotations.proto \
		  google/api/http.proto
SYNCD_GEN      := $(TOP)/build/syncd/gen
SYNCD_GEN_SRC  := $(patsubst %.proto,$(SYNCD_GEN)/%.pb.cc,$(SYNCD_PROTOS)) \
		  $(SYNCD_GEN)/etcd/etcdserver/etcdserverpb/rpc.grpc.pb.cc
SYNCD_GEN_OBJ  := $(patsubst $(SYNCD_GEN)/%.cc,$(TOP)/build/syncd/gen-obj/%.o,$(SYNCD_GEN_SRC))
SYNCD_MAINS    := $(SYNCD_DIR)/ila-syncd.cpp $(SYNCD_DIR)/ila_syncd_bench.cpp
SYNCD_SRC      := $(filter-out $(SYNCD_MAINS),$(wildcard $(SYNCD_DIR)/*.cpp))
SYNCD_OBJ      := $(patsubst $(SYNCD_DIR)/%.cpp,$(TOP)/build/syncd/%.o,$(SYNCD_SRC))
SYNCD_BINS     := $(TOP)/build/bin/ila-syncd $(TOP)/build/bin/ila_syncd_bench
SYNCD_CPPFLAGS := $(UCPPFLAGS) -I$(SYNCD_DIR) -I$(SYNCD_GEN) $(MNL_CFLAGS) $(GRPCPP_CFLAGS) \
		  $(PROTOBUF_CFLAGS)
SYNCD_LIBS     := $(GRPCPP_LIBS) $(PROTOBUF_LIBS) $(MNL_LIBS) -pthread
PROTOBUF_INCDIR := $(shell pkg-config --variable=includedir protobuf 2>/dev/null || echo /usr/include)

tools: $(SYNCD_BINS)

$(SYNCD_GEN)/.stamp: $(TOP)/config.mk
	$(Q)rm -rf $(SYNCD_GEN) && mkdir -p $(SYNCD_GEN) && echo "  PROTOC  etcd rpc.proto (gRPC)"
	$(Q)$(PROTOC) -I$(ETCD_PROTO_DIR) -I$(GOGO_PROTO_DIR) -I$(GOOGLEAPIS_PROTO_DIR) -I$(PROTOBUF_INCDIR) \
	  --cpp_out=$(SYNCD_GEN) $(SYNCD_PROTOS)
	$(Q)$(PROTOC) -I$(ETCD_PROTO_DIR) -I$(GOGO_PROTO_DIR) -I$(GOOGLEAPIS_PROTO_DIR) -I$(PROTOBUF_INCDIR) \
	  --grpc_out=$(SYNCD_GEN) --plugin=protoc-gen-grpc=$(GRPC_CPP_PLUGIN) etcd/etcdserver/etcdserverpb/rpc.proto
	$(Q)touch $@

$(SYNCD_GEN_SRC): $(SYNCD_GEN)/.stamp
	@:

$(TOP)/build/syncd/gen-obj/%.o: $(SYNCD_GEN)/%.cc $(SYNCD_GEN)/.stamp
	$(Q)mkdir -p $(@D) && echo "  CXX     $(notdir $@) (generated)"
	$(Q)$(CXX) $(CXXSTD) $(OPT) -w -I$(SYNCD_GEN) $(GRPCPP_CFLAGS) $(PROTOBUF_CFLAGS) $(CXXFLAGS) -c -o $@ $<

$(TOP)/build/syncd/%.o: $(SYNCD_DIR)/%.cpp $(SYNCD_GEN)/.stamp
	$(Q)mkdir -p $(@D) && echo "  CXX     $(notdir $@)"
	$(Q)$(CXX) $(CXXSTD) $(OPT) $(WARN) -MMD -MP $(SYNCD_CPPFLAGS) $(CXXFLAGS) \
	  -DNFILR_VERSION='"$(DIST_VERSION)"' -c -o $@ $<

$(TOP)/build/bin/ila-syncd $(TOP)/build/bin/ila_syncd_bench: $(TOP)/build/bin/%: $(TOP)/build/syncd/%.o \
		$(SYNCD_OBJ) $(SYNCD_GEN_OBJ) $(if $(ULIB_SRC),$(ULIB))
	$(Q)mkdir -p $(@D) && echo "  LD      $(notdir $@)"
	$(Q)$(CXX) $(CXXSTD) $(OPT) -o $@ $^ $(LDFLAGS) $(SYNCD_LIBS)

-include $(wildcard $(TOP)/build/syncd/*.d)
endif

# ---- tests -------------------------------------------------------------------
$(UNIT_BIN): $(UNIT_SRC) $(TOP)/bench/cachesim.h $(if $(ULIB_SRC),$(ULIB)) $(KHDRS) $(wildcard $(TOP)/userspace/lib/*.h) $(TOP)/tests/fuzz/reply_fuzz.h $(wildcard $(SYNCD_DIR)/*.h)
	$(Q)$(if $(filter no,$(UNIT_TESTS)),echo "make: *** configured with --disable-unit-tests: apt-get install libgtest-dev and rerun ./configure"; exit 1)
	$(Q)mkdir -p $(@D) && echo "  CXX     unit_tests"
	$(Q)$(CXX) $(CXXSTD) $(OPT) $(WARN) $(UCPPFLAGS) -I$(SYNCD_DIR) $(MNL_CFLAGS) $(CXXFLAGS) -o $@ $(UNIT_SRC) \
	  $(if $(ULIB_SRC),$(ULIB)) $(LDFLAGS) $(MNL_LIBS) -lgtest -lgtest_main -pthread

unit: $(UNIT_BIN)
	$(Q)$(UNIT_BIN) $(if $(FILTER),--gtest_filter='$(FILTER)')

$(STRESS_BIN): $(STRESS_SRC) $(wildcard $(TOP)/tests/stress/*.h) $(if $(ULIB_SRC),$(ULIB)) $(KHDRS)
	$(Q)mkdir -p $(@D) && echo "  CXX     ila_stress"
	$(Q)$(CXX) $(CXXSTD) $(OPT) $(WARN) $(UCPPFLAGS) $(MNL_CFLAGS) $(CXXFLAGS) -o $@ $(STRESS_SRC) \
	  $(if $(ULIB_SRC),$(ULIB)) $(LDFLAGS) $(MNL_LIBS) -pthread

# make check [SUITE=ila] [FILTER=regex] [KERNELS=...]
check: all $(UNIT_BIN) $(STRESS_BIN)
	$(Q)$(TOP)/tests/run-check --kernels "$(KERNELS)" $(if $(SUITE),--suite '$(SUITE)') $(if $(FILTER),--filter '$(FILTER)')

# make fuzz [FUZZ_SECS=60]: the netlink reply parser under libFuzzer with
# ASan/UBSan (needs clang; the unit tests replay its seeds and mutations
# without it).
FUZZ_SECS ?= 60
FUZZ_BIN  := $(TOP)/build/fuzz/reply_fuzz
$(FUZZ_BIN): $(TOP)/tests/fuzz/reply_fuzz.cpp $(ULIB_SRC) $(wildcard $(TOP)/userspace/lib/*.h) $(KHDRS)
	$(Q)command -v clang++ >/dev/null || { echo "make: *** make fuzz needs clang++: apt-get install clang"; exit 1; }
	$(Q)mkdir -p $(@D) && echo "  CLANG++ reply_fuzz"
	$(Q)clang++ $(CXXSTD) -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	  $(UCPPFLAGS) $(MNL_CFLAGS) -o $@ $< $(ULIB_SRC) $(MNL_LIBS)

fuzz: $(FUZZ_BIN)
	$(Q)mkdir -p $(TOP)/build/fuzz/corpus
	$(Q)$(FUZZ_BIN) -max_total_time=$(FUZZ_SECS) -print_final_stats=1 $(TOP)/build/fuzz/corpus

# make stress [KERNELS=...] [STRESS_SECS=600] [STRESS_SEED=N]: tests/stress/ila_stress.bats
# for STRESS_SECS seconds on each kernel, every slab cache under slub_debug
# (make check runs it too, for 60 s unless STRESS_SECS is given)
STRESS_SECS ?= 600
stress: all $(STRESS_BIN)
	$(Q)$(TOP)/tests/stress/run-stress --kernels "$(KERNELS)" --secs $(STRESS_SECS)

demo: all
	$(Q)$(TOP)/tests/vm/run --kernel $(firstword $(KERNELS)) -- $(TOP)/tests/demo.sh

bench: all
	$(Q)$(TOP)/bench/run $(if $(BENCH),--only '$(BENCH)') --kernel $(firstword $(KERNELS))

# ---- install -----------------------------------------------------------------
install: $(if $(KERNELS),install-modules) install-userspace

install-modules: modules
	$(Q)for k in $(KERNELS); do \
	  install -d $(DESTDIR)/lib/modules/$$k/extra && \
	  install -m 0644 $(TOP)/build/kmod/$$k/*.ko $(DESTDIR)/lib/modules/$$k/extra/ && \
	  if [ -z "$(DESTDIR)" ]; then depmod -a $$k; else depmod -b $(DESTDIR) -a $$k 2>/dev/null || true; fi; \
	done

install-userspace: userspace
	$(Q)install -d $(DESTDIR)$(xtlibdir) $(DESTDIR)$(sbindir) $(DESTDIR)$(mandir)/man8
	$(Q)$(if $(PLUGINS),install -m 0755 $(PLUGINS) $(DESTDIR)$(xtlibdir)/)
	$(Q)$(if $(INSTALL_TOOLS),install -m 0755 $(INSTALL_TOOLS) $(DESTDIR)$(sbindir)/)
	$(Q)$(if $(MANFRAGS),install -m 0644 $(MANPAGE) $(DESTDIR)$(mandir)/man8/)
	$(Q)$(if $(TOOL_MANS),install -m 0644 $(TOOL_MANS) $(DESTDIR)$(mandir)/man8/)
	$(Q)$(if $(filter yes,$(SYNCD)),install -m 0755 $(TOP)/build/bin/ila-syncd $(DESTDIR)$(sbindir)/ && \
	  install -m 0644 $(SYNCD_DIR)/ila-syncd.8 $(DESTDIR)$(mandir)/man8/)

uninstall:
	$(Q)for k in $(KERNELS); do for m in $(addsuffix .ko,$(KMODS)); do \
	  rm -f $(DESTDIR)/lib/modules/$$k/extra/$$m; done; [ -n "$(DESTDIR)" ] || depmod -a $$k; done
	$(Q)rm -f $(addprefix $(DESTDIR)$(xtlibdir)/,$(notdir $(PLUGINS))) \
	  $(addprefix $(DESTDIR)$(sbindir)/,$(notdir $(INSTALL_TOOLS))) \
	  $(DESTDIR)$(mandir)/man8/nf-ila-rtcache.8 $(addprefix $(DESTDIR)$(mandir)/man8/,$(notdir $(TOOL_MANS))) \
	  $(DESTDIR)$(sbindir)/ila-syncd $(DESTDIR)$(mandir)/man8/ila-syncd.8

clean:
	$(Q)rm -rf $(TOP)/build/kmod $(TOP)/build/ulib $(TOP)/build/bin $(TOP)/build/unit $(TOP)/build/man \
	  $(TOP)/build/tests $(TOP)/build/syncd $(TOP)/build/cachesim
	$(Q)rm -f $(TOP)/xtables/*.so

include $(TOP)/packaging.mk

# make dist: build/nf-ila-rtcache-VERSION.tar.gz, the sources with a generated
# ./configure (xtables-addons style: packagers run ./configure && make, no
# autotools needed). The tree as it is: git's tracked and untracked files
# that are not ignored (or everything but build/ without git).
DIST_VERSION = $(shell sed -n 's/^AC_INIT.\[[^]]*\], *\[\([^]]*\)\].*/\1/p' $(TOP)/configure.ac)
DIST_NAME    = nf-ila-rtcache-$(DIST_VERSION)
dist:
	$(Q)rm -rf $(TOP)/build/dist && mkdir -p $(TOP)/build/dist/$(DIST_NAME)
	$(Q)cd $(TOP) && if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then \
	  git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf -; \
	  else tar --exclude=./build --exclude=./.git -cf - .; fi | tar -C $(TOP)/build/dist/$(DIST_NAME) -xf -
	$(Q)cd $(TOP)/build/dist/$(DIST_NAME) && ./autogen.sh >/dev/null && rm -rf autom4te.cache
	$(Q)tar -C $(TOP)/build/dist --owner=0 --group=0 -czf $(TOP)/build/$(DIST_NAME).tar.gz $(DIST_NAME)
	$(Q)rm -rf $(TOP)/build/dist
	$(Q)echo "build/$(DIST_NAME).tar.gz: tar xf it, then ./configure && make && make install"

distclean: clean
	$(Q)rm -rf $(TOP)/build $(TOP)/config.mk $(TOP)/config.status $(TOP)/config.log \
	  $(TOP)/configure $(TOP)/autom4te.cache $(TOP)/aclocal.m4

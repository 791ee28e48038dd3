# nf-ila-rtcache top-level Makefile.
#
# Quick start on a fresh Debian machine:   make demo    make check
# Packagers:   ./configure [--with-kbuild=DIR|--without-kbuild] [--with-xtlibdir=DIR]
#              make && make install DESTDIR=...
#
# config.mk is written by ./configure; targets that need it bootstrap it
# (autoreconf + configure) on first use.

TOP := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
NOCONFIG_GOALS := deps help clean distclean
ifneq ($(filter-out $(NOCONFIG_GOALS),$(or $(MAKECMDGOALS),all)),)
-include $(TOP)/config.mk
endif

V ?= 0
Q := $(if $(filter 1,$(V)),,@)

# ---- kernels ---------------------------------------------------------------
# KERNELS: releases to build modules for (each needs /lib/modules/<rel>/build).
# Default: the one configure chose. `make check` and `make bench` default to
# every installed kernel that has both headers and an image (the test matrix).
INSTALLED_KERNELS := $(foreach r,$(patsubst /lib/modules/%/build/Makefile,%,\
	$(wildcard /lib/modules/*/build/Makefile)),$(if $(wildcard /boot/vmlinuz-$(r)),$(r)))
ifneq ($(filter check,$(MAKECMDGOALS)),)
KERNELS ?= $(or $(INSTALLED_KERNELS),$(KERNELRELEASE_CONFIGURED))
endif
KERNELS ?= $(KERNELRELEASE_CONFIGURED)
# Second kernel of the test matrix, installed by `make deps` for check/bench
# (bookworm-backports). Empty it to test only what is installed.
TEST_KERNELS ?= 6.12
kbuild_for = $(if $(filter $(1),$(KERNELRELEASE_CONFIGURED)),$(KBUILD_DIR),/lib/modules/$(1)/build)

KSRC   := $(wildcard $(TOP)/kernel/*.c) $(wildcard $(TOP)/kernel/*.h) $(TOP)/kernel/Kbuild
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
TOOL_MANS  := $(wildcard $(TOP)/userspace/*.8)
UNIT_SRC   := $(wildcard $(TOP)/tests/unit/*.cpp)
UNIT_BIN   := $(TOP)/build/unit/unit_tests

.PHONY: all modules userspace plugins tools man deps check unit demo bench \
        install install-modules install-userspace uninstall clean distclean help
.DEFAULT_GOAL := all

all: $(if $(KERNELS),modules) userspace

help:
	@sed -n '1,/^$$/p' $(TOP)/Makefile | sed 's/^# \{0,1\}//'
	@echo 'Targets: all modules userspace deps check unit demo bench install uninstall clean distclean'
	@echo 'Variables: KERNELS="rel ..." (modules per kernel), SUITE=name FILTER=regex (check), V=1'

# ---- bootstrap ---------------------------------------------------------------
$(TOP)/config.mk: $(TOP)/configure.ac $(TOP)/config.mk.in
	$(Q)if [ -n "$(filter check demo bench,$(MAKECMDGOALS))" ]; then \
	  $(TOP)/scripts/deps.sh $(if $(filter check,$(MAKECMDGOALS)),--kernels "$(TEST_KERNELS)"); fi
	$(Q)command -v autoreconf >/dev/null || { echo "autoconf missing: run 'make deps' (or apt-get install autoconf pkg-config)"; exit 1; }
	$(Q)cd $(TOP) && if [ -x config.status ] && [ config.status -nt configure.ac ]; then ./config.status; \
	  else autoreconf -fi && ./configure $(CONFIGURE_ARGS); fi

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
tools: $(TOOLS)
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
	$(Q)$(CXX) $(CXXSTD) $(OPT) $(WARN) $(UCPPFLAGS) $(MNL_CFLAGS) $(CXXFLAGS) -o $@ $< \
	  $(if $(ULIB_SRC),$(ULIB)) $(LDFLAGS) $(MNL_LIBS)

$(MANPAGE): $(MANFRAGS) $(TOP)/xtables/header.man.in
	$(Q)mkdir -p $(@D)
	$(Q){ cat $(TOP)/xtables/header.man.in; \
	  for f in $(MANFRAGS); do n=$${f##*/libxt_}; n=$${n%.man}; \
	    echo ".SS $$n"; cat $$f; done; } > $@

# ---- tests -------------------------------------------------------------------
$(UNIT_BIN): $(UNIT_SRC) $(if $(ULIB_SRC),$(ULIB)) $(KHDRS) $(wildcard $(TOP)/userspace/lib/*.h)
	$(Q)mkdir -p $(@D) && echo "  CXX     unit_tests"
	$(Q)$(CXX) $(CXXSTD) $(OPT) $(WARN) $(UCPPFLAGS) $(MNL_CFLAGS) $(CXXFLAGS) -o $@ $(UNIT_SRC) \
	  $(if $(ULIB_SRC),$(ULIB)) $(LDFLAGS) $(MNL_LIBS) -lgtest -lgtest_main -pthread

unit: $(UNIT_BIN)
	$(Q)$(UNIT_BIN) $(if $(FILTER),--gtest_filter='$(FILTER)')

# make check [SUITE=ila] [FILTER=regex] [KERNELS=...]
check: all $(UNIT_BIN)
	$(Q)$(TOP)/tests/run-check --kernels "$(KERNELS)" $(if $(SUITE),--suite '$(SUITE)') $(if $(FILTER),--filter '$(FILTER)')

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
	$(Q)$(if $(TOOLS),install -m 0755 $(TOOLS) $(DESTDIR)$(sbindir)/)
	$(Q)$(if $(MANFRAGS),install -m 0644 $(MANPAGE) $(DESTDIR)$(mandir)/man8/)
	$(Q)$(if $(TOOL_MANS),install -m 0644 $(TOOL_MANS) $(DESTDIR)$(mandir)/man8/)

uninstall:
	$(Q)for k in $(KERNELS); do for m in $(notdir $(patsubst %.c,%.ko,$(wildcard $(TOP)/kernel/*.c))); do \
	  rm -f $(DESTDIR)/lib/modules/$$k/extra/$$m; done; [ -n "$(DESTDIR)" ] || depmod -a $$k; done
	$(Q)rm -f $(addprefix $(DESTDIR)$(xtlibdir)/,$(notdir $(PLUGINS))) \
	  $(addprefix $(DESTDIR)$(sbindir)/,$(notdir $(TOOLS))) \
	  $(DESTDIR)$(mandir)/man8/nf-ila-rtcache.8 $(addprefix $(DESTDIR)$(mandir)/man8/,$(notdir $(TOOL_MANS)))

clean:
	$(Q)rm -rf $(TOP)/build/kmod $(TOP)/build/ulib $(TOP)/build/bin $(TOP)/build/unit $(TOP)/build/man
	$(Q)rm -f $(TOP)/xtables/*.so

include $(TOP)/packaging.mk

distclean: clean
	$(Q)rm -rf $(TOP)/build $(TOP)/config.mk $(TOP)/config.status $(TOP)/config.log \
	  $(TOP)/configure $(TOP)/autom4te.cache $(TOP)/aclocal.m4

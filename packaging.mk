# Debian packages (included from the Makefile).
#
#   make deb              build/deb/nf-ila-rtcache-{dkms,tools}_VERSION_*.deb (+ lintian)
#   make check-package    the package test alone: make deb, install into a fresh
#                         root, dkms for every kernel, smoke test in the VM
#                         (KERNELS=... to narrow; `make check` runs it too)
#
# The version is configure.ac's AC_INIT version; see packaging/make-deb.

.PHONY: deb check-package

deb:
	$(Q)$(TOP)/packaging/make-deb

check-package:
	$(Q)$(TOP)/tests/package/run --kernels "$(if $(filter command line environment,$(origin KERNELS)),$(KERNELS),$(or $(INSTALLED_KERNELS),$(KERNELS)))"

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * qemu_plugin_api.h: the part of QEMU's TCG plugin API (API version 1,
 * QEMU 7.2 as Debian 12 ships it) that bench/cachesim.c uses, declared
 * from QEMU's plugin documentation (docs/devel/tcg-plugins.rst and the
 * kernel-doc of include/qemu/qemu-plugin.h): Debian's qemu-system-x86
 * exports these functions but packages no header. Only what we call is
 * declared; the plugin checks the version QEMU reports at load time.
 */
#ifndef NFILR_BENCH_QEMU_PLUGIN_API_H
#define NFILR_BENCH_QEMU_PLUGIN_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* the API version these declarations describe */
#define CS_QEMU_PLUGIN_API 1

#define CS_PLUGIN_EXPORT __attribute__((visibility("default")))

typedef uint64_t qemu_plugin_id_t;

/* what QEMU tells the plugin at install time (valid during that call only) */
typedef struct qemu_info_t {
	const char *target_name;
	struct {
		int min;	/* oldest API version this QEMU accepts */
		int cur;	/* newest */
	} version;
	bool system_emulation;
	union {
		struct {
			int smp_vcpus;
			int max_vcpus;
		} system;
	};
} qemu_info_t;

struct qemu_plugin_tb;
struct qemu_plugin_insn;
struct qemu_plugin_hwaddr;
typedef uint32_t qemu_plugin_meminfo_t;

enum qemu_plugin_cb_flags {
	QEMU_PLUGIN_CB_NO_REGS,
	QEMU_PLUGIN_CB_R_REGS,
	QEMU_PLUGIN_CB_RW_REGS,
};

enum qemu_plugin_mem_rw {
	QEMU_PLUGIN_MEM_R = 1,
	QEMU_PLUGIN_MEM_W,
	QEMU_PLUGIN_MEM_RW,
};

typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_vcpu_mem_cb_t)(unsigned int vcpu_index, qemu_plugin_meminfo_t info,
					  uint64_t vaddr, void *userdata);

/* exported by the plugin */
extern CS_PLUGIN_EXPORT int qemu_plugin_version;
CS_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
					 int argc, char **argv);

/* exported by QEMU */
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb, qemu_plugin_vcpu_udata_cb_t cb,
					  enum qemu_plugin_cb_flags flags, void *userdata);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn,
					    qemu_plugin_vcpu_udata_cb_t cb,
					    enum qemu_plugin_cb_flags flags, void *userdata);
void qemu_plugin_register_vcpu_mem_cb(struct qemu_plugin_insn *insn, qemu_plugin_vcpu_mem_cb_t cb,
				      enum qemu_plugin_cb_flags flags, enum qemu_plugin_mem_rw rw,
				      void *userdata);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);

size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
/* system mode, 7.2: the host address of the guest memory holding the instruction */
void *qemu_plugin_insn_haddr(const struct qemu_plugin_insn *insn);

unsigned int qemu_plugin_mem_size_shift(qemu_plugin_meminfo_t info);
struct qemu_plugin_hwaddr *qemu_plugin_get_hwaddr(qemu_plugin_meminfo_t info, uint64_t vaddr);
bool qemu_plugin_hwaddr_is_io(const struct qemu_plugin_hwaddr *haddr);
uint64_t qemu_plugin_hwaddr_phys_addr(const struct qemu_plugin_hwaddr *haddr);

void qemu_plugin_outs(const char *string);

#endif /* NFILR_BENCH_QEMU_PLUGIN_API_H */

// SPDX-License-Identifier: GPL-2.0-only
/*
 * cachesim-mark: the guest side of the cache model (bench/cachesim.c).
 *
 *   cachesim-mark start       executes the start marker: the plugin counts from here
 *   cachesim-mark stop        executes the stop marker: the plugin writes the interval
 *   cachesim-mark write FILE STRING
 *                             opens FILE, then writes STRING and a newline to it
 *                             (as echo does; pktgen's pgctrl drops the last byte)
 *                             in one write() between the markers (with
 *                             FILE = /proc/net/pktgen/pgctrl and "start", a pktgen
 *                             run: bench/model.sh); exit 1 if the write fails
 *   cachesim-mark warm FILE STRING
 *                             the same write between the markers that switch the
 *                             simulation on and off without counting (a warm-up)
 *   cachesim-mark sweep BYTES PASSES [STRIDE]
 *                             a known workload between its own markers: reads one
 *                             byte every STRIDE (64) bytes of a BYTES buffer (K, M
 *                             suffixes), PASSES times, and prints the guest time the
 *                             interval took (under --bench: its instruction count)
 *
 * The markers are whole-system: everything the vCPU runs between them
 * (kernel, other processes) is counted, not only this process.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static inline void mark_start(void)
{
	__asm__ volatile(".byte 0x0f, 0x1f, 0x80; .long 0x43530001" ::: "memory");
}

static inline void mark_stop(void)
{
	__asm__ volatile(".byte 0x0f, 0x1f, 0x80; .long 0x43530002" ::: "memory");
}

static inline void mark_warm(void)
{
	__asm__ volatile(".byte 0x0f, 0x1f, 0x80; .long 0x43530003" ::: "memory");
}

static inline void mark_cool(void)
{
	__asm__ volatile(".byte 0x0f, 0x1f, 0x80; .long 0x43530004" ::: "memory");
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int parse_size(const char *s, size_t *out)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);

	if (end == s)
		return -1;
	if (*end == 'K' || *end == 'k')
		v <<= 10, end++;
	else if (*end == 'M' || *end == 'm')
		v <<= 20, end++;
	if (*end || v == 0)
		return -1;
	*out = (size_t)v;
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: cachesim-mark start | stop | write|warm FILE STRING | sweep BYTES PASSES [STRIDE]\n");
	return 2;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "start")) {
		mark_start();
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "stop")) {
		mark_stop();
		return 0;
	}
	if (argc == 4 && (!strcmp(argv[1], "write") || !strcmp(argv[1], "warm"))) {
		int warm = argv[1][0] == 'w' && argv[1][1] == 'a';
		size_t len = strlen(argv[3]) + 1;
		char *text = malloc(len + 1);
		int fd = open(argv[2], O_WRONLY);
		ssize_t n;

		if (!text)
			return 1;
		snprintf(text, len + 1, "%s\n", argv[3]);
		if (fd < 0) {
			perror(argv[2]);
			return 1;
		}
		if (warm) {
			mark_warm();
			n = write(fd, text, len);
			mark_cool();
		} else {
			mark_start();
			n = write(fd, text, len);
			mark_stop();
		}
		if (n != (ssize_t)len) {
			perror(argv[2]);
			return 1;
		}
		return close(fd) ? 1 : 0;
	}
	if ((argc == 4 || argc == 5) && !strcmp(argv[1], "sweep")) {
		size_t bytes, passes, stride = 64, p, i;
		volatile unsigned char *buf;
		unsigned long sum = 0;
		uint64_t t0, t1;

		if (parse_size(argv[2], &bytes) || parse_size(argv[3], &passes) ||
		    (argc == 5 && parse_size(argv[4], &stride)))
			return usage();
		buf = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
			   -1, 0);
		if (buf == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
		for (i = 0; i < bytes; i += 4096)
			buf[i] = 1;	/* every page present and private before the interval */
		t0 = now_ns();
		mark_start();
		for (p = 0; p < passes; p++)
			for (i = 0; i < bytes; i += stride)
				sum += buf[i];
		mark_stop();
		t1 = now_ns();
		printf("sweep bytes=%zu passes=%zu stride=%zu reads=%zu guest_ns=%llu sum=%lu\n", bytes,
		       passes, stride, passes * ((bytes + stride - 1) / stride),
		       (unsigned long long)(t1 - t0), sum);
		return 0;
	}
	return usage();
}

/* The kernel command line of the unikernel as the program's arguments: each
 * word becomes an argv entry (settings are NAME=value words, which the
 * settings table reads with command_line_words; other words such as
 * console= or virtio_mmio.device= are ignored by it), with the Linux image's
 * network words translated: ingot.ip=A.B.C.D/N → INGOT_NET_IP=...,
 * ingot.gw=A.B.C.D → INGOT_NET_GW=.... Also the line itself, kept for the
 * drivers that read their words later (netdev, metal_vm). No hardware:
 * unit-tested on the host. */
#ifndef KERNEL_METAL_CMDLINE_H
#define KERNEL_METAL_CMDLINE_H

#include <stddef.h>

#define IG_METAL_MAX_ARGS 64
#define IG_METAL_ARGS_BYTES 6144
#define IG_METAL_CMDLINE_MAX 4096 /* with its NUL */

struct ig_metal_args {
	int argc;
	char *argv[IG_METAL_MAX_ARGS + 1]; /* argv[0] is the program's name; NULL-terminated */
	char buf[IG_METAL_ARGS_BYTES];
};

/* Splits the command line as the kernel does (spaces separate, double
 * quotes protect spaces and are removed) into out, argv[0] = name. Returns
 * argc, or -1 when there are more words than IG_METAL_MAX_ARGS or more bytes
 * than the buffer holds (then out is the words that fitted). */
int ig_metal_cmdline_args(const char *cmdline, const char *name, struct ig_metal_args *out);

/* Keeps a copy of the boot's command line (the start info that holds it
 * lies in memory the page allocator may hand out); -1 when it does not fit
 * in IG_METAL_CMDLINE_MAX, and nothing is kept. */
int ig_metal_cmdline_keep(const char *cmdline);
/* The line kept, "" before. */
const char *ig_metal_boot_cmdline(void);

/* The value of the last word key=value (quotes removed) copied into out, or
 * NULL when there is none or it does not fit. */
const char *ig_metal_cmdline_value(const char *cmdline, const char *key, char *out, size_t cap);

#endif

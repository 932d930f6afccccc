/* Entry into musl: the initial process stack that Linux's exec would build
 * (argc, argv, envp, auxv), on the program's main stack, then musl's
 * __libc_start_main, which sets up TLS (from the PT_TLS header given in
 * AT_PHDR), runs the constructors and calls main. */
#ifndef KERNEL_METAL_LIBC_START_H
#define KERNEL_METAL_LIBC_START_H

#include "cmdline.h"

/* envp holds INGOT_NET=virtio, the unikernel's network, which a
 * command-line word INGOT_NET=... overrides (flags win over the environment). */
_Noreturn void ig_metal_libc_start(const struct ig_metal_args *args);

#endif

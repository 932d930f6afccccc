/* The Linux system calls that the program, through musl, makes on the
 * unikernel: memory, time, descriptors (fds.h), epoll (epoll_set.h), the
 * few process calls musl's start and the runtime make, and exit. Any other
 * returns -ENOSYS, logged once per number on the console. Threads are
 * smp.h's. */
#ifndef KERNEL_METAL_SYSCALLS_H
#define KERNEL_METAL_SYSCALLS_H

/* Sets STAR/LSTAR/SFMASK so that SYSCALL enters syscall_entry.S. */
void ig_metal_syscalls_init(void);

struct ig_syscall_frame;

/* Called by syscall_entry.S, f its saved registers (NULL from the
 * platform's own calls); returns the value or -errno. Takes the big lock
 * (smp.h) but for the clock. */
long ig_metal_syscall(long nr, long a1, long a2, long a3, long a4, long a5, long a6, const struct ig_syscall_frame *f);

#endif

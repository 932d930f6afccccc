/* Every vCPU the machine has, each running one of the program's threads:
 * the boot CPU runs main, and clone starts a thread on the next free CPU
 * (its first clone wakes it: INIT and start IPIs into ap_start.S). A
 * thread keeps its CPU until it exits; there is no scheduler. The platform
 * below the program (syscalls.c and what it calls) is one critical
 * section, the big lock, which a CPU gives up only while it halts (an
 * epoll or futex wait); a halted CPU is woken by an IPI from a CPU that
 * made something it may wait for ready (an eventfd's write, a futex wake). */
#ifndef KERNEL_METAL_SMP_H
#define KERNEL_METAL_SMP_H

#include <stdbool.h>
#include <stdint.h>

#define IG_METAL_MAX_CPUS 16
/* The page below 1 MiB that the start IPI begins a CPU at (ap_start.S). */
#define IG_AP_TRAMPOLINE 0x8000u
#define IG_IPI_WAKE_VECTOR 0xf0

/* The registers a system call saved (syscall_entry.S), lowest address
 * first: what a clone's child starts from. */
struct ig_syscall_frame {
	uint64_t rbp, r9, r8, r10, rdx, rsi, rdi, r11, rcx;
};

/* On the boot CPU, after ig_lapic_init: counts the CPUs (ACPI's MADT;
 * one when none is listed) and sets the boot CPU's per-CPU state. Each
 * other CPU, once started, loads its own GDT, TSS and the IDT, calls
 * each_cpu (the system call's MSRs: syscalls.h, above this file) and
 * enables its local APIC. */
void ig_smp_init(uint64_t rsdp_paddr, void (*each_cpu)(void));
/* The number of CPUs (sched_getaffinity's mask). */
int ig_smp_cpus(void);
/* This CPU's index, 0 for the boot CPU. */
int ig_smp_self(void);
/* The thread this CPU runs (gettid): 1 for main, then 2, 3... */
long ig_smp_tid(void);

/* The big lock, held by ig_metal_syscall around everything it does. */
void ig_smp_lock(void);
void ig_smp_unlock(void);

/* With the lock held: halts this CPU until an interrupt (an IPI, a device,
 * the LAPIC timer after ns; 0: none), the lock given up meanwhile. While
 * the console holds bytes (console.h) and no other CPU waits for the lock,
 * it writes a burst of them instead and returns at once: a caller looks
 * again for what it waits for, as after any wake. */
void ig_smp_halt(uint64_t ns);
/* With the lock held: wakes every other halted CPU (an eventfd or a futex
 * changed: let each look again). */
void ig_smp_wake_others(void);

/* The system calls that are the threads' own (syscalls.c dispatches them),
 * with the lock held. clone: a thread (CLONE_VM | CLONE_THREAD | CLONE_SETTLS
 * and the TID flags musl gives) on a free CPU; -EAGAIN when none is. */
long ig_smp_clone(unsigned long flags, void *stack, int *ptid, int *ctid, unsigned long tls,
		  const struct ig_syscall_frame *f);
/* exit of a thread other than main's: clears and wakes its ctid, then
 * parks the CPU for a later clone. Never returns. */
_Noreturn void ig_smp_thread_exit(void);
/* futex: WAIT and WAKE (and their BITSET forms; a requeue wakes all). */
long ig_smp_futex(int *uaddr, int op, int val, const void *timeout, int *uaddr2);

#endif

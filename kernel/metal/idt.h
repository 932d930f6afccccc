/* CPU tables of the bare-metal platform: the interrupt descriptor table
 * (exceptions → a register dump and the machine's end; every other vector →
 * an EOI-only stub) and the TSS whose stack catches a double fault. */
#ifndef KERNEL_METAL_IDT_H
#define KERNEL_METAL_IDT_H

#include <stdint.h>

/* What vectors.S pushes, lowest address first, then the CPU's frame. */
struct ig_trap_frame {
	uint64_t r15, r14, r13, r12, r11, r10, r9, r8;
	uint64_t rbp, rdi, rsi, rdx, rcx, rbx, rax;
	uint64_t vector, error;
	uint64_t rip, cs, rflags, rsp, ss;
};

/* Loads the IDT and the TSS. Interrupts stay off: only the idle halt
 * (epoll.c) enables them, for the length of one hlt. */
void ig_metal_idt_init(void);

/* Called by vectors.S on a CPU exception: prints the registers on the
 * console, then a last line naming the exception, and powers off with
 * status 1 (qemu's isa-debug-exit: odd status); never returns. */
_Noreturn void ig_metal_trap(const struct ig_trap_frame *f);

#endif

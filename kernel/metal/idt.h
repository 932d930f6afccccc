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

struct ig_metal_tss {
	uint32_t reserved0;
	uint64_t rsp[3];
	uint64_t reserved1;
	uint64_t ist[7];
	uint64_t reserved2;
	uint16_t reserved3, iomap_base;
} __attribute__((packed));

/* A CPU's own GDT (boot.S's, with its TSS: a busy TSS cannot be loaded by
 * a second CPU) and TSS. */
struct ig_metal_cpu_tables {
	_Alignas(16) uint64_t gdt[5];
	struct ig_metal_tss tss;
};

/* Builds the IDT and loads it and the boot CPU's TSS. Interrupts stay off:
 * only the idle halt (smp.c) enables them, for the length of one hlt. */
void ig_metal_idt_init(void);
/* On another CPU, after ig_metal_idt_init ran on the boot CPU: loads t's
 * GDT and TSS (a double fault's stack at fault_stack_top) and the IDT. */
void ig_metal_idt_load_cpu(struct ig_metal_cpu_tables *t, void *fault_stack_top);

/* Called by vectors.S on a CPU exception: prints the registers on the
 * console, then a last line naming the exception, and powers off with
 * status 1 (qemu's isa-debug-exit: odd status); never returns. */
_Noreturn void ig_metal_trap(const struct ig_trap_frame *f);

#endif

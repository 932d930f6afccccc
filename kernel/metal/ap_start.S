/* Where an application processor (a vCPU after the first) starts, and how a
 * thread enters and leaves one (smp.c). The start IPI (SIPI) begins a CPU
 * in real mode at a page below 1 MiB: smp.c copies the trampoline there
 * (IG_AP_TRAMPOLINE). It loads a GDT of its own with a 32-bit code segment
 * and jumps to ap_start32 in the image, which takes the boot CPU's path
 * into long mode (boot.S's ig_metal_long_mode32: its page tables, SSE and
 * NX, its GDT). ap_start64 then finds the CPU's stack by its
 * local APIC ID and calls ig_metal_ap_main, which never returns. */

#include "kernel/metal/cpu_bits.h"

#define AP_TRAMPOLINE 0x8000   /* smp.h's IG_AP_TRAMPOLINE */
#define LAPIC_ID 0xfee00020

#define TRAMP(sym) (AP_TRAMPOLINE + (sym) - ig_metal_ap_trampoline)

	.section .rodata
	.code16
	.globl ig_metal_ap_trampoline, ig_metal_ap_trampoline_end
ig_metal_ap_trampoline:
	cli
	cld
	xorw %ax, %ax
	movw %ax, %ds
	lgdtl TRAMP(tramp_gdt_ptr)
	movl %cr0, %eax
	orl $CR0_PE, %eax
	movl %eax, %cr0
	ljmpl $0x08, $ap_start32
	.p2align 3
tramp_gdt:
	.quad 0
	.quad 0x00cf9a000000ffff   /* 0x08: 32-bit code, flat */
	.quad 0x00cf92000000ffff   /* 0x10: data, flat */
tramp_gdt_ptr:
	.word tramp_gdt_ptr - tramp_gdt - 1
	.long TRAMP(tramp_gdt)
ig_metal_ap_trampoline_end:

	.section .text.boot, "ax"
	.code32
ap_start32:
	movl $0x10, %eax
	movl %eax, %ds
	movl %eax, %es
	movl %eax, %ss
	movl $ap_start64_far, %ebp
	jmp ig_metal_long_mode32

	.code64
ap_start64:
	movl $LAPIC_ID, %eax
	movl (%rax), %edi
	shrl $24, %edi
	leaq ig_metal_ap_stacks(%rip), %rax
	movq (%rax,%rdi,8), %rsp
	xorl %ebp, %ebp
	call ig_metal_ap_main
2:	cli
	hlt
	jmp 2b

	.data
ap_start64_far:
	.long ap_start64
	.word 0x08

/* ig_metal_thread_enter(regs): a thread clone made, on this CPU, as the
 * clone system call returns in the child: its registers as the parent
 * made the call (those musl's __clone reads), rax 0, its own stack. */
	.text
	.globl ig_metal_thread_enter
ig_metal_thread_enter:
	movq 0(%rdi), %rsp
	movq 16(%rdi), %r9
	movq 24(%rdi), %r8
	movq 32(%rdi), %r10
	movq 40(%rdi), %rdx
	movq 48(%rdi), %rsi
	movq 8(%rdi), %rcx
	movq 56(%rdi), %rdi
	xorl %eax, %eax
	xorl %ebp, %ebp
	jmp *%rcx

/* ig_metal_on_stack(fn, arg, stack_top): calls fn(arg) on another stack
 * (a finished thread's CPU leaves the thread's stack, which its joiner
 * frees); fn does not return. */
	.globl ig_metal_on_stack
ig_metal_on_stack:
	movq %rdx, %rsp
	xorl %ebp, %ebp
	movq %rdi, %rax
	movq %rsi, %rdi
	call *%rax
3:	cli
	hlt
	jmp 3b

	.section .note.GNU-stack, "", @progbits

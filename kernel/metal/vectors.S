/* The interrupt descriptor table's entry points. Vectors 0-31 (CPU
 * exceptions) save every register and call ig_metal_trap, which dumps them
 * and ends the machine. Vectors 0x20-0xff only end the interrupt at the
 * local APIC: the program polls its devices, an interrupt just ends the
 * idle halt (epoll.c), so nothing more is to be done in it. */

/* Exceptions that push an error code: #DF 8, #TS..#PF 10-14, #AC 17,
 * #CP 21, #VC 29, #SX 30. The others get a 0 so that the frame is uniform. */
.macro trap_stub n
	.p2align 4
trap_stub_\n:
	.if (\n == 8) || (\n >= 10 && \n <= 14) || (\n == 17) || (\n == 21) || (\n == 29) || (\n == 30)
	.else
	pushq $0
	.endif
	pushq $\n
	jmp trap_common
.endm

	.text
	.altmacro
.set i, 0
.rept 32
	trap_stub %i
	.set i, i + 1
.endr

/* struct ig_trap_frame (idt.h), lowest address first. */
trap_common:
	pushq %rax
	pushq %rbx
	pushq %rcx
	pushq %rdx
	pushq %rsi
	pushq %rdi
	pushq %rbp
	pushq %r8
	pushq %r9
	pushq %r10
	pushq %r11
	pushq %r12
	pushq %r13
	pushq %r14
	pushq %r15
	movq %rsp, %rdi
	andq $-16, %rsp
	call ig_metal_trap
1:	cli
	hlt
	jmp 1b

/* The LAPIC's EOI register at 0xfee000b0: any write ends the interrupt. */
	.p2align 4
	.globl ig_metal_irq_stub
ig_metal_irq_stub:
	pushq %rax
	movl $0xfee000b0, %eax
	movl $0, (%rax)
	popq %rax
	iretq

.macro stub_addr n
	.quad trap_stub_\n
.endm
	.section .rodata
	.p2align 3
	.globl ig_metal_trap_stubs
ig_metal_trap_stubs:
.set i, 0
.rept 32
	stub_addr %i
	.set i, i + 1
.endr

	.section .note.GNU-stack, "", @progbits

/* images/qemu's test of a host's KVM before it picks it: the smallest PVH
 * kernel that enables SSE and executes one SSE instruction (pxor), then
 * ends qemu through isa-debug-exit with status 65. A KVM nested where SSE cannot run in a guest stops at the
 * pxor with "KVM internal error", as the unikernel and Linux would. Built
 * with the images (make unikernel, make boot); never part of one. */

#include "kernel/metal/cpu_bits.h"

	/* XEN_ELFNOTE_PHYS32_ENTRY (18): name "Xen", the 32-bit entry point. */
	.section .note.pvh, "a", @note
	.p2align 2
	.long 4, 4, 18
	.asciz "Xen"
	.long probe_entry

	/* PVH enters in 32-bit protected mode, paging off. SSE needs CR0.EM
	   clear, CR0.MP set and CR4.OSFXSR (with OSXMMEXCPT) set. */
	.text
	.code32
	.globl probe_entry
probe_entry:
	mov %cr0, %eax
	and $~CR0_EM, %eax
	or $CR0_MP, %eax
	mov %eax, %cr0
	mov %cr4, %eax
	or $(CR4_OSFXSR | CR4_OSXMMEXCPT), %eax
	mov %eax, %cr4
	pxor %xmm0, %xmm0
	/* Reached: isa-debug-exit ends qemu with (0x20 << 1) | 1 = 65, a
	   status qemu never gives by itself (its own failures are 1). */
	mov $0xf4, %dx
	mov $0x20, %al
	outb %al, %dx
1:	hlt
	jmp 1b

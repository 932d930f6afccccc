/* images/qemu's test of a host's KVM before it picks it: the smallest PVH
 * kernel that enables SSE and executes one SSE instruction (pxor), then
 * writes "kvm-probe: sse ok" to COM1 and ends qemu through isa-debug-exit
 * (status 1). A KVM nested where SSE cannot run in a guest stops at the
 * pxor with "KVM internal error", as the unikernel and Linux would. Built
 * with the images (make unikernel, make boot); never part of one. */

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
	and $~4, %eax
	or $2, %eax
	mov %eax, %cr0
	mov %cr4, %eax
	or $0x600, %eax
	mov %eax, %cr4
	pxor %xmm0, %xmm0
	mov $line, %esi
	mov $0x3f8, %dx
1:	lodsb
	test %al, %al
	jz 2f
	outb %al, %dx
	jmp 1b
2:	mov $0xf4, %dx
	xor %eax, %eax
	outb %al, %dx
3:	hlt
	jmp 3b
line:	.asciz "kvm-probe: sse ok\n"

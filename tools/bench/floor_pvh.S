/* The floor of a VM's boot: the smallest x86_64 ELF kernel that qemu's
 * microvm boots through its PVH entry (the Xen PHYS32_ENTRY note), as the
 * unikernel and the Linux vmlinux boot. It writes one line to COM1 and ends
 * qemu through isa-debug-exit (status 1), or halts where that port is
 * absent. boot.js times qemu's start to this line: what is left of a boot
 * when the kernel does nothing, as floor.c is for a server's answer. */

	/* XEN_ELFNOTE_PHYS32_ENTRY (18): name "Xen", the 32-bit entry point. */
	.section .note.pvh, "a", @note
	.p2align 2
	.long 4, 4, 18
	.asciz "Xen"
	.long floor_entry

	/* PVH enters in 32-bit protected mode, paging off: no setup needed to
	   reach the ports. The UART is usable as qemu leaves it. */
	.text
	.code32
	.globl floor_entry
floor_entry:
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
line:	.asciz "floor: up\n"

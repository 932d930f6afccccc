/* The unikernel's image as it ships (build/images/unikernel.elf): this
 * stub and the kernel (unikernel.kernel.elf's loaded bytes, from its first
 * address to the end of its data) compressed with lz4's legacy format
 * (`lz4 -l -12`: a magic, then blocks, each its compressed size and an
 * LZ4 block). The PVH loader puts the stub above the kernel's memory and
 * enters it as it would the kernel (32-bit protected mode, paging off,
 * %ebx = hvm_start_info); the stub writes the kernel's bytes to the
 * address they were linked at and jumps to its PVH entry with %ebx as it
 * came. The kernel never returns here: its allocator sees this memory as
 * free (and clears it before handing it out), so the stub and its payload
 * cost nothing after the jump.
 *
 * The kernel's memory is this ELF's first segment, all of it zeros (no
 * bytes in the file, p_memsz its size): the loader clears it as it clears
 * any ELF's bss (qemu at native speed; Firecracker's memory is fresh), so
 * the kernel's bss is zero without the stub writing it. Under TCG every
 * octet the stub moved cost as much as an instruction: clearing 1.4 MB of
 * bss took more of the boot than the decoding.
 *
 * The make assembles it with, from the kernel's symbols:
 *   KERNEL_LOAD       its first address (its bytes are written there)
 *   KERNEL_BYTES_END  where the payload's bytes end: checked after the copy
 *   KERNEL_END        the end of its memory (its bss)
 *   KERNEL_ENTRY      its PVH entry
 *   KERNEL_UNPACKED_END  its ig_metal_unpacked_end (kernel/metal/entry.c),
 *                     where the stub tells it how far up it wrote
 * and PAYLOAD, the compressed file's path as a string; it links the stub
 * at KERNEL_END or above and the section .kernel_memory at KERNEL_LOAD. A
 * payload that is not lz4's legacy format, or that gives another size,
 * writes one line to COM1 and ends the machine with an odd status
 * (isa-debug-exit; else it halts): a damaged image never runs half a
 * kernel.
 *
 * The moves are 16 octets (SSE, which boot.S turns on for the kernel too)
 * and may run past what they move by up to 15: the input's next octets are
 * only read, and the output's are rewritten by the next sequence or, past
 * the kernel's bytes, lie in its bss, which the stub leaves zero by
 * clearing what it overran. No stack: the PVH state has none. %ebx is kept
 * in %xmm7 while the moves use it. */

#include "kernel/metal/cpu_bits.h"

#define LZ4_LEGACY_MAGIC 0x184c2102
#define COM1 0x3f8
#define DEBUG_EXIT 0xf4
#define OVERRUN 16 /* the most a move writes past its end, rounded up */

	/* The overrun past the kernel's bytes lands in its bss. */
	.if KERNEL_END - KERNEL_BYTES_END < OVERRUN
	.error "the kernel's bss is smaller than a move's overrun"
	.endif

	/* XEN_ELFNOTE_PHYS32_ENTRY (18), name "Xen": the descriptor read as
	   a pointer-sized word (boot.S's note, for the kernel itself). */
	.section .note.pvh, "a", @note
	.p2align 2
	.long 4, 8, 18
	.asciz "Xen"
	.quad unpack_start32

	/* The kernel's memory, zeroed by the loader (above). */
	.section .kernel_memory, "aw", @nobits
	.skip KERNEL_END - KERNEL_LOAD

	/* Sixteen octets a move from \src to %edi, until %edi reaches %ebx
	   (the last move may pass it). */
	.macro MOVE_UNTIL_EBX src
7:	movdqu (\src), %xmm0
	movdqu %xmm0, (%edi)
	addl $16, \src
	addl $16, %edi
	cmpl %ebx, %edi
	jb 7b
	.endm

	.text
	.code32
	.globl unpack_start32
unpack_start32:
	cli
	cld
	movl %cr0, %eax
	andl $~CR0_EM, %eax
	orl $CR0_MP, %eax
	movl %eax, %cr0
	movl %cr4, %eax
	orl $(CR4_OSFXSR | CR4_OSXMMEXCPT), %eax
	movl %eax, %cr4
	movd %ebx, %xmm7
	movl $payload, %esi
	cmpl $LZ4_LEGACY_MAGIC, (%esi)
	jne bad_payload
	addl $4, %esi
	movl $KERNEL_LOAD, %edi

	/* A block: its compressed size, then that many bytes, decoded to
	   %edi. %ebp is the block's end. */
next_block:
	cmpl $payload_end, %esi
	jae unpacked
	movl (%esi), %ebp
	addl $4, %esi
	cmpl $LZ4_LEGACY_MAGIC, %ebp /* a second frame: only its header */
	je next_block
	addl %esi, %ebp
	cmpl $payload_end, %ebp
	ja bad_payload

	/* A sequence: a token (literals' length in its high nibble, the
	   match's less 4 in its low one; 15 continues in bytes while they
	   are 255), the literals, then (but for a block's last sequence) the
	   match's 2-byte offset back from %edi and its length's bytes. */
sequence:
	cmpl %ebp, %esi
	jae next_block
	movzbl (%esi), %edx
	incl %esi
	movl %edx, %ecx
	shrl $4, %ecx
	cmpl $15, %ecx
	jne literals
1:	movzbl (%esi), %eax
	incl %esi
	addl %eax, %ecx
	cmpl $255, %eax
	je 1b
literals:
	/* %ecx octets from %esi to %edi, then both step back by the last
	   move's overrun. %ebx: where they end. */
	leal (%edi,%ecx), %ebx
	MOVE_UNTIL_EBX %esi
	subl %ebx, %edi
	subl %edi, %esi
	movl %ebx, %edi
	cmpl %ebp, %esi
	jae next_block
	movzwl (%esi), %eax
	addl $2, %esi
	testl %eax, %eax /* no match starts at its own end */
	jz bad_payload
	andl $15, %edx
	cmpl $15, %edx
	jne match
3:	movzbl (%esi), %ecx
	incl %esi
	addl %ecx, %edx
	cmpl $255, %ecx
	je 3b
match:
	/* %edx + 4 octets from %eax back: %ebx where they end, %edx where
	   they come from. */
	leal 4(%edi,%edx), %ebx
	movl %edi, %edx
	subl %eax, %edx
	cmpl $16, %eax
	jb near
far:
	/* 16 or more back: a move reads only octets already written. */
	MOVE_UNTIL_EBX %edx
	movl %ebx, %edi
	jmp sequence
near:
	/* Fewer than 16 back: the match repeats its first %eax octets. Each
	   round copies the distance's octets from the match's source, which
	   stays, so the distance doubles; at 16 `far` goes on from there.
	   %esi waits in %xmm6 while rep movsb uses it. */
	movd %esi, %xmm6
5:	movl %edi, %ecx
	subl %edx, %ecx
	cmpl $16, %ecx
	jae 6f
	movl %edx, %esi
	rep movsb
	cmpl %ebx, %edi
	jb 5b
	movd %xmm6, %esi
	movl %ebx, %edi
	jmp sequence
6:	movd %xmm6, %esi
	jmp far

unpacked:
	cmpl $KERNEL_BYTES_END, %edi
	jne bad_payload
	/* What the last moves overran, in the bss: zero again. */
	pxor %xmm0, %xmm0
	movdqu %xmm0, (%edi)
	movd %xmm7, %ebx
	/* The kernel's allocator clears what this wrote before handing it
	   out (kernel/metal/pages.c): where that ends. */
	movl $payload_end, KERNEL_UNPACKED_END
	movl $0, KERNEL_UNPACKED_END + 4
	movl $KERNEL_ENTRY, %eax
	jmp *%eax

bad_payload:
	movl $bad_line, %esi
	movw $COM1, %dx
3:	lodsb
	testb %al, %al
	jz 4f
	outb %al, %dx
	jmp 3b
	/* As the kernel's failures end (kernel/metal/power.c): qemu's
	   isa-debug-exit, an odd status; else a halt. */
4:	movb $1, %al
	movw $DEBUG_EXIT, %dx
	outb %al, %dx
5:	hlt
	jmp 5b

	.section .rodata
bad_line:
	.asciz "{\"level\":\"error\",\"msg\":\"unpack: the image's payload is damaged (not lz4's legacy format, or not the kernel's size)\"}\r\n"
	.p2align 2
payload:
	.incbin PAYLOAD
payload_end:

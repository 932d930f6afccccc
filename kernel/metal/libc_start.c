/* The auxiliary vector musl reads: a PT_TLS program header built from the
 * linker script's symbols (the ELF's own headers are not in memory), the
 * page size, 16 random bytes for the stack protector's canary, the CPU's
 * features, and uid == euid, gid == egid, AT_SECURE 0, so that musl takes
 * no secure-mode path (which would poll descriptors 0-2). */
#include "libc_start.h"
#include "mmu.h"
#include "syscalls.h"
#include "kernel/process/fatal.h"
#include "kernel/runtime/clock.h"

#include <elf.h>
#include <stdint.h>
#include <sys/random.h>
#include <sys/syscall.h>

#define MAIN_STACK_BYTES (256 * 1024)

extern char __tls_start[], __tls_filesz[], __tls_memsz[], __tls_align[];
void ig_metal_enter_libc(void *rsp, int argc, char **argv) __attribute__((noreturn));

/* Its lowest page is the guard (mmu.h). */
static uint64_t main_stack[MAIN_STACK_BYTES / 8] __attribute__((aligned(4096)));
static Elf64_Phdr phdrs[1];
static unsigned char at_random[16];
static char net_default[] = "INGOT_NET=virtio";
static char *const envp[] = { net_default, NULL };

static uint64_t cpuid_edx(uint32_t leaf)
{
	uint32_t a = leaf, b, c, d;
	__asm__ volatile("cpuid" : "+a"(a), "=b"(b), "=c"(c), "=d"(d));
	return d;
}

_Noreturn void ig_metal_libc_start(const struct ig_metal_args *args)
{
	phdrs[0] = (Elf64_Phdr){
		.p_type = PT_TLS,
		.p_flags = PF_R,
		.p_vaddr = (uintptr_t)__tls_start,
		.p_paddr = (uintptr_t)__tls_start,
		.p_filesz = (uintptr_t)__tls_filesz,
		.p_memsz = (uintptr_t)__tls_memsz,
		.p_align = (uintptr_t)__tls_align ? (uintptr_t)__tls_align : 1,
	};
	ig_mmu_guard_page(main_stack);
	ig_clock_counts_from_boot = true; /* tsc.h: 0 is the PVH entry */
	ig_fatal_faults_are_exceptions = true; /* idt.c names a fault */
	/* AT_RANDOM seeds musl's canary, not a key: any source will do. */
	ig_metal_syscall(SYS_getrandom, (long)at_random, sizeof at_random, GRND_NONBLOCK, 0, 0, 0, NULL);
	const uint64_t auxv[][2] = {
		{ AT_PHDR, (uintptr_t)phdrs },
		{ AT_PHENT, sizeof(Elf64_Phdr) },
		{ AT_PHNUM, 1 },
		{ AT_PAGESZ, 4096 },
		{ AT_UID, 0 },
		{ AT_EUID, 0 },
		{ AT_GID, 0 },
		{ AT_EGID, 0 },
		{ AT_SECURE, 0 },
		{ AT_HWCAP, cpuid_edx(1) },
		{ AT_RANDOM, (uintptr_t)at_random },
		{ AT_EXECFN, (uintptr_t)args->argv[0] },
		{ AT_NULL, 0 },
	};
	size_t nenv = sizeof envp / sizeof envp[0]; /* with its NULL */
	size_t words = 1 + (size_t)args->argc + 1 + nenv + 2 * (sizeof auxv / sizeof auxv[0]);
	uint64_t *sp = main_stack + MAIN_STACK_BYTES / 8 - words;
	sp = (uint64_t *)((uintptr_t)sp & ~(uintptr_t)15);
	uint64_t *w = sp;
	*w++ = (uint64_t)args->argc;
	for (int i = 0; i <= args->argc; i++)
		*w++ = (uintptr_t)args->argv[i];
	for (size_t i = 0; i < nenv; i++)
		*w++ = (uintptr_t)envp[i];
	for (size_t i = 0; i < sizeof auxv / sizeof auxv[0]; i++) {
		*w++ = auxv[i][0];
		*w++ = auxv[i][1];
	}
	ig_metal_enter_libc(sp, args->argc, (char **)(sp + 1));
}

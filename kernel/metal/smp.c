/* The CPUs (smp.h): their per-CPU state (found through GS, which nothing
 * of the program uses), the big lock (a ticket lock), halts and wake IPIs,
 * and threads: clone, exit and futex. */
#include "smp.h"
#include "acpi.h"
#include "console.h"
#include "cpu.h"
#include "idt.h"
#include "lapic.h"
#include "pages.h"
#include "tsc.h"

#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>
#include <time.h>

#define MSR_FS_BASE 0xc0000100u
#define MSR_GS_BASE 0xc0000101u
#define FUTEX_WAIT 0
#define FUTEX_WAKE 1
#define FUTEX_REQUEUE 3
#define FUTEX_CMP_REQUEUE 4
#define FUTEX_WAIT_BITSET 9
#define FUTEX_WAKE_BITSET 10
#define FUTEX_CLOCK_REALTIME 256
#define CPU_STACK_PAGES 4 /* a parked CPU's own stack, and its fault stack */

enum cpu_state {
	CPU_OFF,     /* never started */
	CPU_GO,      /* given a thread, not yet running it */
	CPU_RUNNING, /* runs its thread */
	CPU_PARKED,  /* its thread exited: halts until the next clone */
};

/* The registers a thread starts with (ap_start.S's offsets). */
struct thread_regs {
	uint64_t rsp, rip, r9, r8, r10, rdx, rsi, rdi;
};

struct ig_cpu {
	struct ig_cpu *self; /* %gs:0 */
	int index;
	uint8_t apic_id;
	_Atomic int state;
	_Atomic bool halted;  /* in ig_smp_halt: an IPI wakes it */
	int *_Atomic futex;   /* the address it waits on, or NULL */
	long tid;
	int *clear_tid;       /* CLONE_CHILD_CLEARTID's, cleared at its exit */
	uint64_t fs;
	struct thread_regs regs;
	uint8_t *stack_top, *fault_stack_top;
	struct ig_metal_cpu_tables tables;
};

/* Indexed by local APIC ID: the stack ap_start64 takes. */
uint64_t ig_metal_ap_stacks[256];
extern const char ig_metal_ap_trampoline[], ig_metal_ap_trampoline_end[];
void ig_metal_ap_main(uint32_t apic_id);
void ig_metal_thread_enter(const struct thread_regs *r) __attribute__((noreturn));
void ig_metal_on_stack(void (*fn)(void *), void *arg, void *stack_top) __attribute__((noreturn));

static struct ig_cpu cpus[IG_METAL_MAX_CPUS];
static void (*cpu_init)(void);
static int ncpus = 1;
static long last_tid = 1;
static struct {
	_Atomic uint32_t next, serving;
} big;

static struct ig_cpu *self(void)
{
	struct ig_cpu *c;
	__asm__ volatile("mov %%gs:0, %0" : "=r"(c));
	return c;
}

static void set_self(struct ig_cpu *c)
{
	c->self = c;
	ig_wrmsr(MSR_GS_BASE, (uint64_t)(uintptr_t)c);
}

void ig_smp_init(uint64_t rsdp_paddr, void (*each_cpu)(void))
{
	cpu_init = each_cpu;
	uint8_t ids[IG_METAL_MAX_CPUS];
	int n = ig_acpi_cpus(rsdp_paddr, ids, IG_METAL_MAX_CPUS);
	uint8_t boot_id = ig_lapic_id();
	cpus[0] = (struct ig_cpu){ .index = 0, .apic_id = boot_id, .state = CPU_RUNNING, .tid = 1 };
	ncpus = 1;
	for (int i = 0; i < n; i++)
		if (ids[i] != boot_id && ncpus < IG_METAL_MAX_CPUS) {
			cpus[ncpus] = (struct ig_cpu){ .index = ncpus, .apic_id = ids[i], .state = CPU_OFF };
			ncpus++;
		}
	set_self(&cpus[0]);
}

int ig_smp_cpus(void)
{
	return ncpus;
}

int ig_smp_self(void)
{
	return self()->index;
}

long ig_smp_tid(void)
{
	return self()->tid;
}

void ig_smp_lock(void)
{
	uint32_t ticket = atomic_fetch_add_explicit(&big.next, 1, memory_order_relaxed);
	while (atomic_load_explicit(&big.serving, memory_order_acquire) != ticket)
		__asm__ volatile("pause");
}

void ig_smp_unlock(void)
{
	uint32_t s = atomic_load_explicit(&big.serving, memory_order_relaxed);
	atomic_store_explicit(&big.serving, s + 1, memory_order_release);
}

/* An IPI that arrives between the unlock and the hlt stays pending (the
 * interrupt flag is clear) and ends the hlt at once: sti's shadow makes
 * "sti; hlt" one step. */
void ig_smp_halt(uint64_t ns)
{
	/* Idle time is the console's first (console.h): a burst, and the
	   caller looks again for what it waits for; but not while another
	   CPU waits for the lock, which has work. */
	bool contended = atomic_load_explicit(&big.next, memory_order_relaxed) -
				 atomic_load_explicit(&big.serving, memory_order_relaxed) >
			 1;
	if (!contended && ig_console_idle_write())
		return;
	struct ig_cpu *c = self();
	atomic_store(&c->halted, true);
	ig_lapic_timer_arm(ns);
	ig_smp_unlock();
	__asm__ volatile("sti; hlt; cli" ::: "memory");
	ig_smp_lock();
	atomic_store(&c->halted, false);
}

static void wake(struct ig_cpu *c)
{
	if (atomic_load(&c->halted))
		ig_lapic_send(c->apic_id, IG_LAPIC_FIXED | IG_IPI_WAKE_VECTOR);
}

void ig_smp_wake_others(void)
{
	struct ig_cpu *me = self();
	for (int i = 0; i < ncpus; i++)
		if (&cpus[i] != me && cpus[i].state != CPU_OFF)
			wake(&cpus[i]);
}

/* ---- threads ---- */

/* With the lock held: waits for a thread, then runs it (and gives up the
 * lock as it does). */
static _Noreturn void run_thread(struct ig_cpu *c)
{
	while (atomic_load(&c->state) != CPU_GO)
		ig_smp_halt(0);
	atomic_store(&c->state, CPU_RUNNING);
	ig_wrmsr(MSR_FS_BASE, c->fs);
	struct thread_regs r = c->regs;
	ig_smp_unlock();
	ig_metal_thread_enter(&r);
}

void ig_metal_ap_main(uint32_t apic_id)
{
	struct ig_cpu *c = NULL;
	for (int i = 1; i < ncpus && !c; i++)
		if (cpus[i].apic_id == apic_id)
			c = &cpus[i];
	if (!c)
		for (;;)
			__asm__ volatile("cli; hlt");
	set_self(c);
	ig_metal_idt_load_cpu(&c->tables, c->fault_stack_top);
	cpu_init();
	ig_lapic_init_ap();
	ig_smp_lock();
	run_thread(c);
}

/* INIT, then the start IPI twice (the second is ignored by a CPU that
 * took the first), as the MP specification's sequence; the delays it asks
 * of real hardware are a hypervisor's to ignore. */
static int start_cpu(struct ig_cpu *c)
{
	uint8_t *stacks = ig_pages_alloc(2 * CPU_STACK_PAGES);
	if (!stacks)
		return -ENOMEM;
	c->stack_top = stacks + CPU_STACK_PAGES * IG_PAGE_SIZE;
	c->fault_stack_top = stacks + 2 * CPU_STACK_PAGES * IG_PAGE_SIZE;
	ig_metal_ap_stacks[c->apic_id] = (uint64_t)(uintptr_t)c->stack_top;
	static bool copied;
	if (!copied) {
		memcpy((void *)(uintptr_t)IG_AP_TRAMPOLINE, ig_metal_ap_trampoline,
		       (size_t)(ig_metal_ap_trampoline_end - ig_metal_ap_trampoline));
		copied = true;
	}
	atomic_thread_fence(memory_order_seq_cst);
	ig_lapic_send(c->apic_id, IG_LAPIC_INIT);
	ig_lapic_send(c->apic_id, IG_LAPIC_STARTUP | (IG_AP_TRAMPOLINE >> 12));
	ig_lapic_send(c->apic_id, IG_LAPIC_STARTUP | (IG_AP_TRAMPOLINE >> 12));
	return 0;
}

long ig_smp_clone(unsigned long flags, void *stack, int *ptid, int *ctid, unsigned long tls,
		  const struct ig_syscall_frame *f)
{
	if (!(flags & CLONE_VM) || !(flags & CLONE_THREAD) || !stack || !f)
		return -ENOSYS; /* no processes: threads only */
	struct ig_cpu *c = NULL;
	for (int i = 1; i < ncpus && !c; i++)
		if (atomic_load(&cpus[i].state) == CPU_PARKED)
			c = &cpus[i];
	for (int i = 1; i < ncpus && !c; i++)
		if (atomic_load(&cpus[i].state) == CPU_OFF)
			c = &cpus[i];
	if (!c)
		return -EAGAIN; /* a thread per CPU */
	long tid = ++last_tid;
	c->tid = tid;
	c->regs = (struct thread_regs){ .rsp = (uint64_t)(uintptr_t)stack, .rip = f->rcx, .r9 = f->r9, .r8 = f->r8,
					.r10 = f->r10, .rdx = f->rdx, .rsi = f->rsi, .rdi = f->rdi };
	uint32_t lo, hi;
	__asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(MSR_FS_BASE));
	uint64_t fs = (uint64_t)hi << 32 | lo;
	c->fs = flags & CLONE_SETTLS ? tls : fs;
	c->clear_tid = flags & CLONE_CHILD_CLEARTID ? ctid : NULL;
	if (flags & CLONE_PARENT_SETTID)
		*ptid = (int)tid;
	if (flags & CLONE_CHILD_SETTID)
		*ctid = (int)tid;
	bool off = atomic_load(&c->state) == CPU_OFF;
	atomic_store(&c->state, CPU_GO);
	if (off) {
		int e = start_cpu(c);
		if (e) {
			atomic_store(&c->state, CPU_OFF);
			return e;
		}
	} else {
		wake(c);
	}
	return tid;
}

static void futex_wake_addr(const int *a, const int *b, int max, long *woken);

/* On the CPU's own stack: the thread's may be freed as soon as its joiner
 * sees the cleared ctid. */
static _Noreturn void finish_thread(void *arg)
{
	struct ig_cpu *c = arg;
	if (c->clear_tid) {
		atomic_store((_Atomic int *)c->clear_tid, 0);
		long n = 0;
		futex_wake_addr(c->clear_tid, NULL, 1 << 30, &n);
	}
	atomic_store(&c->state, CPU_PARKED);
	run_thread(c);
}

_Noreturn void ig_smp_thread_exit(void)
{
	struct ig_cpu *c = self();
	ig_metal_on_stack(finish_thread, c, c->stack_top);
}

static void futex_wake_addr(const int *a, const int *b, int max, long *woken)
{
	struct ig_cpu *me = self();
	for (int i = 0; i < ncpus && *woken < max; i++) {
		struct ig_cpu *c = &cpus[i];
		int *w = atomic_load(&c->futex);
		if (c != me && w && (w == a || w == b)) {
			atomic_store(&c->futex, NULL);
			ig_lapic_send(c->apic_id, IG_LAPIC_FIXED | IG_IPI_WAKE_VECTOR);
			++*woken;
		}
	}
}

static uint64_t ns_of(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000u + (uint64_t)ts->tv_nsec;
}

/* A wait ends on its wake, its timeout, or any other interrupt (a
 * spurious wake-up, which futex's callers expect). */
long ig_smp_futex(int *uaddr, int op, int val, const void *timeout, int *uaddr2)
{
	int cmd = op & 127;
	switch (cmd) {
	case FUTEX_WAIT:
	case FUTEX_WAIT_BITSET: {
		if (atomic_load((_Atomic int *)uaddr) != val)
			return -EAGAIN;
		uint64_t now = ig_tsc_now_ns(), wait = 0;
		if (timeout) {
			uint64_t t = ns_of(timeout);
			if (cmd == FUTEX_WAIT_BITSET) { /* absolute */
				uint64_t base = op & FUTEX_CLOCK_REALTIME ? ig_tsc_wall_ns() : now;
				if (t <= base)
					return -ETIMEDOUT;
				t -= base;
			}
			if (t == 0)
				return -ETIMEDOUT;
			wait = t;
		}
		struct ig_cpu *c = self();
		atomic_store(&c->futex, uaddr);
		ig_smp_halt(wait);
		bool woken = atomic_load(&c->futex) == NULL;
		atomic_store(&c->futex, NULL);
		if (!woken && timeout && ig_tsc_now_ns() - now >= wait)
			return -ETIMEDOUT;
		return 0;
	}
	case FUTEX_WAKE:
	case FUTEX_WAKE_BITSET: {
		long n = 0;
		futex_wake_addr(uaddr, NULL, val, &n);
		return n;
	}
	case FUTEX_REQUEUE:
	case FUTEX_CMP_REQUEUE: { /* every waiter on either address wakes */
		long n = 0;
		futex_wake_addr(uaddr, uaddr2, 1 << 30, &n);
		return n;
	}
	}
	return -ENOSYS;
}

/* The log rings (log_ring.h): one single-producer ring per thread that
 * logs, mapped on its first line, and one writer thread, started with the
 * first queued line, that merges the rings by timestamp into blocking
 * write(2)s to stdout. Only the writer ever waits for the reader. */
#include "log_ring.h"

#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* futex(2)'s operations (musl has no linux/futex.h). */
#define FUTEX_WAIT_PRIVATE 128
#define FUTEX_WAKE_PRIVATE 129

#define RING_BYTES (64 * 1024)
/* Info and debug lines leave this much free, so that errors and warnings
   still fit when a blocked reader has filled the rest. */
#define RING_RESERVE (RING_BYTES / 4)
/* Every core of the largest machine (IG_MAX_CORES, 256) and its helper
   threads; a thread past it writes directly. */
#define MAX_RINGS 512
/* How long the writer waits for more lines once woken: a line's delay at
   most, and well under what fills a ring (48 KiB of info lines take a
   loop a few milliseconds at the least). */
#define LINGER_NS 1000000
/* A batch is at most what a pipe writes atomically, so that a line written
   directly meanwhile (the fatal-signal line) lands between two lines, not
   inside one. A line is at most 2 KiB (struct ig_logline), so one fits. */
#define OUT_BYTES PIPE_BUF
_Static_assert(sizeof(((struct ig_logline *)0)->buf) <= OUT_BYTES, "a line fits in one batch");

struct record {
	uint32_t len;
	uint32_t pad;
	uint64_t ts_ns;
};

struct ring {
	_Alignas(64) _Atomic uint64_t tail; /* the producer's: bytes ever pushed */
	_Atomic uint64_t dropped;           /* the producer's; the writer reads it */
	uint64_t stalled_at;                /* the producer's: see make_room */
	_Alignas(64) _Atomic uint64_t head; /* the writer's: bytes ever taken */
	_Alignas(64) char data[RING_BYTES];
};

/* The rings by number, mapped with the first (address space until then: an
 * idle server that logs nothing after "listening" holds none of it). */
typedef _Atomic(struct ring *) ring_slot;
static _Atomic(ring_slot *) ring_table;
static _Atomic int ring_count;

enum { WRITER_NONE, WRITER_STARTING, WRITER_RUNNING, WRITER_FAILED, WRITER_STOPPED };
static _Atomic int writer_state; /* a futex word too: the exit waits for STOPPED */
static _Atomic int writer_quit;   /* the exit's: end once the rings are empty */
static pthread_t writer_thread;
/* The writer's state (a futex word): busy (a producer wakes nobody),
   asleep with the rings empty (the next line wakes it), or lingering
   after a wake to let more lines come (a ring a quarter full cuts it
   short). */
enum { WRITER_BUSY, WRITER_ASLEEP, WRITER_LINGERING };
static _Atomic int writer_idle;
/* Counts the writer's batches: a full ring that sees it stand still
   waits on the reader, not on the CPU. */
static _Atomic uint64_t writer_batches;
/* 1 while the writer is in write(2), where a reader can hold it. */
static _Atomic int writer_writing;
static _Atomic int flush_asked;
static _Atomic int flushed; /* a futex word too */

static cpu_set_t writer_cpus;
static bool writer_cpus_set;

static _Thread_local struct ring *mine;
static _Thread_local bool direct; /* the writer, or no ring to be had */

static void futex_wait(_Atomic int *word, int value, const struct timespec *timeout)
{
	syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, value, timeout, NULL, 0);
}

static void futex_wake(_Atomic int *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void copy_in(struct ring *r, uint64_t at, const void *src, size_t n)
{
	size_t off = (size_t)(at % RING_BYTES), first = RING_BYTES - off < n ? RING_BYTES - off : n;
	memcpy(r->data + off, src, first);
	memcpy(r->data, (const char *)src + first, n - first);
}

static void copy_out(const struct ring *r, uint64_t at, void *dst, size_t n)
{
	size_t off = (size_t)(at % RING_BYTES), first = RING_BYTES - off < n ? RING_BYTES - off : n;
	memcpy(dst, r->data + off, first);
	memcpy((char *)dst + first, r->data, n - first);
}

static size_t record_bytes(size_t len)
{
	return (sizeof(struct record) + len + 7) & ~(size_t)7;
}

/* Wakes the writer when it sleeps, and when it lingers if `hurry`. */
static void wake_writer(bool hurry)
{
	/* Orders the push before the look at writer_idle; the writer orders
	   its store of writer_idle before its last look at the rings. */
	atomic_thread_fence(memory_order_seq_cst);
	int st = atomic_load_explicit(&writer_idle, memory_order_relaxed);
	if ((st == WRITER_ASLEEP || (st == WRITER_LINGERING && hurry)) &&
	    atomic_compare_exchange_strong(&writer_idle, &st, WRITER_BUSY))
		futex_wake(&writer_idle);
}

/* The oldest line over all rings: its ring, or NULL when all are empty. */
static struct ring *oldest(struct record *rec)
{
	struct ring *best = NULL;
	int n = atomic_load_explicit(&ring_count, memory_order_acquire);
	ring_slot *rings = atomic_load_explicit(&ring_table, memory_order_acquire);
	for (int i = 0; rings && i < n && i < MAX_RINGS; i++) {
		struct ring *r = atomic_load_explicit(&rings[i], memory_order_acquire);
		if (!r)
			continue;
		uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
		if (atomic_load_explicit(&r->tail, memory_order_acquire) == head)
			continue;
		struct record h;
		copy_out(r, head, &h, sizeof h);
		if (!best || h.ts_ns < rec->ts_ns) {
			best = r;
			*rec = h;
		}
	}
	return best;
}

/* Whether a ring is a quarter full already (its loop would not wake a
 * lingering writer again). */
static bool filling(void)
{
	int n = atomic_load_explicit(&ring_count, memory_order_acquire);
	ring_slot *rings = atomic_load_explicit(&ring_table, memory_order_acquire);
	for (int i = 0; rings && i < n && i < MAX_RINGS; i++) {
		struct ring *r = atomic_load_explicit(&rings[i], memory_order_acquire);
		if (r && atomic_load_explicit(&r->tail, memory_order_acquire) -
					 atomic_load_explicit(&r->head, memory_order_relaxed) >=
				 RING_BYTES / 4)
			return true;
	}
	return false;
}

/* Takes whole lines, oldest first, into out; returns the bytes taken. */
static size_t gather(char *out, size_t cap)
{
	size_t n = 0;
	struct record rec;
	struct ring *r;
	while ((r = oldest(&rec)) && n + rec.len <= cap) {
		uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
		copy_out(r, head + sizeof rec, out + n, rec.len);
		n += rec.len;
		atomic_store_explicit(&r->head, head + record_bytes(rec.len), memory_order_release);
	}
	return n;
}

static void write_all(const char *p, size_t n)
{
	for (size_t off = 0; off < n;) {
		ssize_t w = write(1, p + off, n - off);
		if (w <= 0)
			return; /* stdout closed or failing: the lines are lost */
		off += (size_t)w;
	}
}

/* Once output flows again: one line with what was dropped since the last. */
static void report_dropped(uint64_t *reported)
{
	uint64_t total = ig_log_ring_dropped();
	if (total == *reported)
		return;
	struct ig_logline l;
	if (ig_log_begin(&l, IG_LOG_WARN, "log lines dropped")) {
		ig_log_int(&l, "dropped", (int64_t)(total - *reported));
		ig_log_int(&l, "total", (int64_t)total);
		ig_log_end_direct(&l);
	}
	*reported = total;
}

static void *writer_main(void *arg)
{
	(void)arg;
	direct = true;
	char out[OUT_BYTES];
	uint64_t reported = 0;
	for (;;) {
		size_t n = gather(out, OUT_BYTES);
		if (n) {
			atomic_store_explicit(&writer_writing, 1, memory_order_relaxed);
			write_all(out, n);
			atomic_store_explicit(&writer_writing, 0, memory_order_relaxed);
			atomic_fetch_add_explicit(&writer_batches, 1, memory_order_relaxed);
			report_dropped(&reported);
			continue;
		}
		atomic_store(&writer_idle, WRITER_ASLEEP);
		atomic_thread_fence(memory_order_seq_cst);
		struct record rec;
		if (oldest(&rec)) {
			atomic_store(&writer_idle, WRITER_BUSY);
			continue;
		}
		if (atomic_load(&flush_asked) && !atomic_load(&flushed)) {
			/* Again, after seeing the request: what was queued
			   before it is visible from here, even if the look
			   above came too early. */
			if (oldest(&rec)) {
				atomic_store(&writer_idle, WRITER_BUSY);
				continue;
			}
			atomic_store(&flushed, 1);
			futex_wake(&flushed);
		}
		if (atomic_load(&writer_quit) && !oldest(&rec)) {
			atomic_store(&writer_state, WRITER_STOPPED);
			futex_wake(&writer_state);
			return NULL;
		}
		futex_wait(&writer_idle, WRITER_ASLEEP, NULL);
		/* Woken by a line: let the lines that follow it come, so that a
		   busy loop wakes the writer about once a millisecond and the
		   writer writes full batches, not a line at a time. */
		int busy = WRITER_BUSY;
		if (!atomic_load(&flush_asked) && !filling() &&
		    atomic_compare_exchange_strong(&writer_idle, &busy, WRITER_LINGERING))
			futex_wait(&writer_idle, WRITER_LINGERING, &(struct timespec){ .tv_nsec = LINGER_NS });
		atomic_store(&writer_idle, WRITER_BUSY);
	}
	return NULL;
}

static void start_writer(void)
{
	int none = WRITER_NONE;
	if (!atomic_compare_exchange_strong(&writer_state, &none, WRITER_STARTING))
		return;
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	/* Signals belong to the loops' signalfd: the writer takes none. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pthread_t t;
	int rc = pthread_create(&t, &attr, writer_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (rc == 0) {
		if (writer_cpus_set) /* failure is harmless: it runs where it was made */
			pthread_setaffinity_np(t, sizeof writer_cpus, &writer_cpus);
		writer_thread = t; /* joined at the exit (ig_log_ring_flush) */
	}
	atomic_store(&writer_state, rc == 0 ? WRITER_RUNNING : WRITER_FAILED);
}

/* The table, mapped by the first thread that needs it. */
static ring_slot *rings_for_attach(void)
{
	ring_slot *t = atomic_load_explicit(&ring_table, memory_order_acquire);
	if (t)
		return t;
	void *m = mmap(NULL, MAX_RINGS * sizeof *t, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	ring_slot *none = NULL;
	if (!atomic_compare_exchange_strong_explicit(&ring_table, &none, (ring_slot *)m, memory_order_acq_rel,
						     memory_order_acquire)) {
		munmap(m, MAX_RINGS * sizeof *t);
		return none;
	}
	return m;
}

static struct ring *attach(void)
{
	ring_slot *rings = rings_for_attach();
	if (!rings)
		return NULL;
	start_writer();
	if (atomic_load(&writer_state) == WRITER_FAILED)
		return NULL;
	int i = atomic_fetch_add(&ring_count, 1);
	if (i >= MAX_RINGS)
		return NULL;
	/* Address space only: a page is touched when a line first reaches it. */
	struct ring *r = mmap(NULL, sizeof *r, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r == MAP_FAILED)
		return NULL;
	r->stalled_at = UINT64_MAX;
	atomic_store_explicit(&rings[i], r, memory_order_release);
	return r;
}

/* A full ring is one the writer has not had the CPU to drain (it shares
 * a core with this loop, or waits to be scheduled), or one that waits on
 * the reader. The loop yields the writer the core while that drains the
 * ring; once a yield shows no progress with the writer in a write, the
 * reader is the cause, and the ring's lines drop at once until the writer
 * finishes another batch: a blocked stdout costs a loop one sched_yield
 * per batch, not per line. */
static bool make_room(struct ring *r, uint64_t tail, size_t need)
{
	uint64_t batches = atomic_load_explicit(&writer_batches, memory_order_relaxed);
	if (batches == r->stalled_at)
		return false;
	uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
	for (int i = 0; i < 32; i++) {
		wake_writer(true);
		sched_yield();
		uint64_t now = atomic_load_explicit(&r->head, memory_order_acquire);
		if (tail - now + need <= RING_BYTES)
			return true;
		if (now == head && atomic_load_explicit(&writer_batches, memory_order_relaxed) == batches &&
		    atomic_load_explicit(&writer_writing, memory_order_relaxed))
			break;
		head = now;
		batches = atomic_load_explicit(&writer_batches, memory_order_relaxed);
	}
	r->stalled_at = batches;
	return false;
}

static bool queue(const struct ig_logline *l)
{
	struct ring *r = mine;
	if (!r) {
		if (direct || atomic_load(&writer_state) == WRITER_FAILED)
			return false;
		if (!(r = mine = attach())) {
			direct = true;
			return false;
		}
	}
	uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
	uint64_t used = tail - atomic_load_explicit(&r->head, memory_order_acquire);
	size_t need = record_bytes(l->len) + (l->level <= IG_LOG_WARN ? 0 : RING_RESERVE);
	if (used + need > RING_BYTES && !make_room(r, tail, need)) {
		atomic_store_explicit(&r->dropped, atomic_load_explicit(&r->dropped, memory_order_relaxed) + 1,
				      memory_order_relaxed);
		return true;
	}
	struct record rec = { .len = (uint32_t)l->len, .ts_ns = l->ts_ns };
	copy_in(r, tail, &rec, sizeof rec);
	copy_in(r, tail + sizeof rec, l->buf, l->len);
	atomic_store_explicit(&r->tail, tail + record_bytes(l->len), memory_order_release);
	/* A quarter full: the writer stops lingering, well before info
	   lines have to drop. */
	wake_writer(used + record_bytes(l->len) >= RING_BYTES / 4);
	return true;
}

void ig_log_ring_enable(const int *cpus, int ncpus)
{
	CPU_ZERO(&writer_cpus);
	for (int i = 0; i < ncpus; i++)
		if (cpus[i] >= 0 && cpus[i] < CPU_SETSIZE)
			CPU_SET(cpus[i], &writer_cpus);
	writer_cpus_set = CPU_COUNT(&writer_cpus) > 0;
	atomic_store(&ig_log_queue, queue);
}

/* Time left until end, or false when none. */
static bool time_left(const struct timespec *end, struct timespec *left)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	*left = (struct timespec){ end->tv_sec - now.tv_sec, end->tv_nsec - now.tv_nsec };
	if (left->tv_nsec < 0) {
		left->tv_sec--;
		left->tv_nsec += 1000000000;
	}
	return left->tv_sec >= 0;
}

void ig_log_ring_flush(int deadline_ms)
{
	if (atomic_load(&writer_state) != WRITER_RUNNING)
		return;
	struct timespec end, left;
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += deadline_ms / 1000;
	end.tv_nsec += (long)(deadline_ms % 1000) * 1000000;
	if (end.tv_nsec >= 1000000000) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000;
	}
	atomic_store(&flushed, 0);
	atomic_store(&flush_asked, 1);
	wake_writer(true);
	while (!atomic_load(&flushed)) {
		if (!time_left(&end, &left))
			return;
		futex_wait(&flushed, 0, &left);
	}
	/* The process is ending: later lines are written directly, and the
	   writer ends and is joined, so that no thread of ours runs on into
	   the exit (a leak checker that stops every thread there could not
	   stop one in a futex wait in every setting: PID 1 of a namespace). */
	atomic_store(&ig_log_queue, NULL);
	atomic_store(&writer_quit, 1);
	wake_writer(true);
	while (atomic_load(&writer_state) != WRITER_STOPPED) {
		if (!time_left(&end, &left))
			return; /* a reader that does not read: leave it be */
		futex_wait(&writer_state, WRITER_RUNNING, &left);
	}
	pthread_join(writer_thread, NULL);
}

uint64_t ig_log_ring_dropped(void)
{
	uint64_t sum = 0;
	int n = atomic_load_explicit(&ring_count, memory_order_acquire);
	ring_slot *rings = atomic_load_explicit(&ring_table, memory_order_acquire);
	for (int i = 0; rings && i < n && i < MAX_RINGS; i++) {
		struct ring *r = atomic_load_explicit(&rings[i], memory_order_acquire);
		if (r)
			sum += atomic_load_explicit(&r->dropped, memory_order_relaxed);
	}
	return sum;
}

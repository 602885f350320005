/*
 * A stand-in for libcuda.so for the GPU family's plumbing tests (runner/tests/gpu_stub.rs):
 * the driver functions bench-gpu calls, with "device memory" in host memory. It measures
 * nothing about any GPU; it lets the whole path (discovery, registration, sweeps,
 * contention, RAII, result shaping, runner) run where no GPU exists.
 *
 * Environment: FAKE_CUDA_DEVICES (default 1), FAKE_CUDA_FREE_MB (free device memory,
 * default 1024), FAKE_CUDA_ENGINES:
 *   sync (default)  copies done at once with memcpy when enqueued, events stamped with
 *                   CLOCK_MONOTONIC when recorded; a host function runs at the next
 *                   synchronization;
 *   serial, shared  streams are queues run by a simulation on a virtual clock (events
 *                   carry its time) whenever the host synchronizes: each device has one
 *                   copy engine per direction moving FAKE_CUDA_GBS GB/s (default 20);
 *                   `serial` runs the copies of one direction one at a time in the order
 *                   they reached the engine (as an H200's did with k streams; an event
 *                   recorded just before a copy fires when that copy begins), `shared`
 *                   splits the engine evenly among the copies in flight (each of k gets
 *                   1/k). Stream waits on events and host functions are honoured.
 * At exit it prints "fake_cuda: leaked ..." to stderr for every kind of resource not
 * released (allocations, host buffers, registrations, streams, events, context references).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pthread.h>

static long dev_allocs, host_allocs, registrations, streams, events, ctx_refs;
#define MAX_DEV 16
static int ctx_tokens[MAX_DEV];
static __thread int current_dev;

#define ADD(x, n) __atomic_add_fetch(&(x), (n), __ATOMIC_SEQ_CST)

static int env_int(const char *name, int dflt) {
    const char *v = getenv(name);
    return v && *v ? atoi(v) : dflt;
}

int cuGetErrorName(int e, const char **p) { *p = e == 100 ? "CUDA_ERROR_NO_DEVICE" : "CUDA_ERROR_FAKE"; return 0; }
int cuGetErrorString(int e, const char **p) { *p = "fake driver"; return 0; }
int cuDriverGetVersion(int *v) { *v = 12080; return 0; }
int cuInit(unsigned f) { return 0; }
int cuDeviceGetCount(int *n) { *n = env_int("FAKE_CUDA_DEVICES", 1); return 0; }
int cuDeviceGet(int *d, int ordinal) {
    if (ordinal < 0 || ordinal >= env_int("FAKE_CUDA_DEVICES", 1)) return 101; /* INVALID_DEVICE */
    *d = ordinal;
    return 0;
}
int cuDeviceGetName(char *name, int len, int d) { snprintf(name, len, "Fake GPU %d", d); return 0; }
int cuDeviceGetPCIBusId(char *id, int len, int d) { snprintf(id, len, "00000000:%02X:00.0", 0x3b + d); return 0; }
int cuDeviceTotalMem_v2(size_t *b, int d) { *b = (size_t)env_int("FAKE_CUDA_FREE_MB", 1024) << 20; return 0; }
int cuDeviceGetAttribute(int *v, int attr, int d) {
    *v = attr == 75 ? 9 : attr == 76 ? 0 : attr == 40 ? 2 : 0;
    return 0;
}
int cuDevicePrimaryCtxRetain(void **ctx, int d) {
    if (d < 0 || d >= MAX_DEV) return 101;
    ADD(ctx_refs, 1);
    *ctx = &ctx_tokens[d];
    return 0;
}
int cuDevicePrimaryCtxRelease_v2(int d) { ADD(ctx_refs, -1); return 0; }
int cuCtxSetCurrent(void *ctx) {
    if (ctx) current_dev = (int)((int *)ctx - ctx_tokens);
    return 0;
}
int cuMemGetInfo_v2(size_t *free_b, size_t *total) {
    *free_b = *total = (size_t)env_int("FAKE_CUDA_FREE_MB", 1024) << 20;
    return 0;
}
int cuMemAlloc_v2(unsigned long long *p, size_t n) {
    void *m = malloc(n ? n : 1);
    if (!m) return 2; /* OUT_OF_MEMORY */
    ADD(dev_allocs, 1);
    *p = (unsigned long long)(size_t)m;
    return 0;
}
int cuMemFree_v2(unsigned long long p) { free((void *)(size_t)p); ADD(dev_allocs, -1); return 0; }
int cuMemAllocHost_v2(void **p, size_t n) {
    *p = malloc(n ? n : 1);
    if (!*p) return 2;
    ADD(host_allocs, 1);
    return 0;
}
int cuMemFreeHost(void *p) { free(p); ADD(host_allocs, -1); return 0; }
int cuMemHostRegister_v2(void *p, size_t n, unsigned f) { ADD(registrations, 1); return 0; }
int cuMemHostUnregister(void *p) { ADD(registrations, -1); return 0; }
/* Streams, events and the simulated engines. */
enum { OP_COPY, OP_RECORD, OP_WAIT, OP_HOST };
struct ev { double t_ms; long recorded, done; };
struct op {
    int kind, dir;
    void *dst;
    const void *src;
    size_t n;
    double left;       /* bytes still to move (simulated copies) */
    long order;        /* when the copy reached its engine; 0: not yet */
    struct ev *ev;
    long seq;
    void (*fn)(void *);
    void *data;
    struct op *next;
};
struct stream { struct op *head, *tail; struct stream *next, *prev; int dev; double rate; };

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct stream *all_streams;
static double now_ms;      /* the virtual clock */
static long arrivals;
static int mode = -1;      /* 0 sync, 1 serial, 2 shared */

static int engines(void) {
    if (mode < 0) {
        const char *m = getenv("FAKE_CUDA_ENGINES");
        mode = !m || !*m || !strcmp(m, "sync") ? 0 : !strcmp(m, "serial") ? 1 : !strcmp(m, "shared") ? 2 : 0;
    }
    return mode;
}
static double bytes_per_ms(void) {
    const char *g = getenv("FAKE_CUDA_GBS");
    double gbs = g && *g ? atof(g) : 20.0;
    return (gbs > 0 ? gbs : 20.0) * 1e6;
}
static double wall_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}
static void push(struct stream *s, struct op *o) {
    o->next = NULL;
    if (s->tail) s->tail->next = o; else s->head = o;
    s->tail = o;
}
static void pop(struct stream *s) {
    struct op *o = s->head;
    s->head = o->next;
    if (!s->head) s->tail = NULL;
    free(o);
}

/* The bytes per ms the copy at the head of `s` moves now: per device and direction,
 * serial gives the whole engine to the earliest arrival, shared splits it evenly. */
static double rate_of(struct stream *s, double rate) {
    struct op *o = s->head;
    if (!o || o->kind != OP_COPY || !o->order) return 0;
    int sharing = 0, first = 1;
    for (struct stream *t = all_streams; t; t = t->next) {
        struct op *p = t->head;
        if (!p || p->kind != OP_COPY || !p->order || p->dir != o->dir || t->dev != s->dev) continue;
        sharing++;
        if (p->order < o->order) first = 0;
    }
    return mode == 1 ? (first ? rate : 0) : rate / sharing;
}

/* Serial engines also run the event recorded just before a copy, as an H200 did: that
 * start event fires when the copy begins, not when the stream reaches it. So a RECORD
 * followed by a copy queues for the engine (taking its place in line for the copy) and
 * runs when the engine is idle and the copy is first in line. */
static int engine_turn(struct stream *s, struct op *rec) {
    struct op *c = rec->next;
    if (mode != 1 || !c || c->kind != OP_COPY) return 1;
    if (!c->order) c->order = ++arrivals;
    for (struct stream *t = all_streams; t; t = t->next) {
        struct op *h = t->head;
        if (t == s || !h || t->dev != s->dev) continue;
        if (h->kind == OP_COPY && h->order && h->dir == c->dir) return 0; /* engine busy */
        struct op *q = h->kind == OP_RECORD ? h->next : NULL;
        if (q && q->kind == OP_COPY && q->order && q->dir == c->dir && q->order < c->order) return 0;
    }
    return 1;
}

/* Runs every stream until all are empty or nothing can move; called with mu held. */
static void simulate(void) {
    double rate = bytes_per_ms();
    for (;;) {
        int moved = 0;
        for (struct stream *s = all_streams; s; s = s->next) {
            while (s->head) {
                struct op *o = s->head;
                if (o->kind == OP_RECORD) {
                    if (!engine_turn(s, o)) break;
                    o->ev->t_ms = now_ms;
                    if (o->seq > o->ev->done) o->ev->done = o->seq;
                } else if (o->kind == OP_WAIT) {
                    if (o->ev->done < o->seq) break;
                } else if (o->kind == OP_HOST) {
                    void (*fn)(void *) = o->fn;
                    void *data = o->data;
                    pop(s);
                    pthread_mutex_unlock(&mu);
                    fn(data);
                    pthread_mutex_lock(&mu);
                    moved = 1;
                    continue;
                } else {
                    if (!o->order) { o->order = ++arrivals; moved = 1; }
                    break;
                }
                pop(s);
                moved = 1;
            }
        }
        if (moved) continue;
        /* Advance the clock to the next copy to finish, then move every running copy. */
        double dt = -1;
        for (struct stream *t = all_streams; t; t = t->next) {
            double r = rate_of(t, rate);
            if (r > 0 && (dt < 0 || t->head->left / r < dt)) dt = t->head->left / r;
        }
        if (dt < 0) return; /* idle, or waiting on something that never comes */
        for (struct stream *t = all_streams; t; t = t->next) t->rate = rate_of(t, rate);
        now_ms += dt;
        for (struct stream *t = all_streams; t; t = t->next) {
            if (t->rate <= 0) continue;
            struct op *o = t->head;
            o->left -= t->rate * dt;
            if (o->left <= 1e-9 * (double)o->n + 1e-6) {
                memcpy(o->dst, o->src, o->n);
                pop(t);
            }
        }
    }
}

static int enqueue_copy(void *dst, const void *src, size_t n, void *sp, int dir) {
    if (!engines()) { memcpy(dst, src, n); return 0; }
    struct op *o = calloc(1, sizeof *o);
    if (!o) return 2;
    o->kind = OP_COPY; o->dir = dir; o->dst = dst; o->src = src; o->n = n; o->left = (double)n;
    pthread_mutex_lock(&mu);
    push(sp, o);
    pthread_mutex_unlock(&mu);
    return 0;
}
int cuMemcpyHtoDAsync_v2(unsigned long long dst, const void *src, size_t n, void *s) {
    return enqueue_copy((void *)(size_t)dst, src, n, s, 0);
}
int cuMemcpyDtoHAsync_v2(void *dst, unsigned long long src, size_t n, void *s) {
    return enqueue_copy(dst, (const void *)(size_t)src, n, s, 1);
}

/* Synchronous mode: host functions wait here for the next synchronization. */
static struct op *deferred;
static void run_deferred(void) {
    pthread_mutex_lock(&mu);
    struct op *d = deferred;
    deferred = NULL;
    pthread_mutex_unlock(&mu);
    while (d) {
        struct op *n = d->next;
        d->fn(d->data);
        free(d);
        d = n;
    }
}
static int sync_all(void) {
    int stuck = 0;
    if (!engines()) {
        run_deferred();
    } else {
        pthread_mutex_lock(&mu);
        simulate();
        for (struct stream *s = all_streams; s; s = s->next) stuck |= s->head != NULL;
        pthread_mutex_unlock(&mu);
    }
    /* About a microsecond, as a driver's synchronization takes: host-timed figures (the
     * small-copy latency) then stay well above the timer's own overhead. */
    double end = wall_ms() + 1e-3;
    while (wall_ms() < end) {}
    return stuck ? 999 : 0; /* CUDA_ERROR_UNKNOWN: work that can never complete */
}

int cuCtxSynchronize(void) { return sync_all(); }
int cuStreamCreate(void **sp, unsigned f) {
    struct stream *s = calloc(1, sizeof *s);
    if (!s) return 2;
    s->dev = current_dev;
    pthread_mutex_lock(&mu);
    /* Appended: the simulation visits streams in the order they were created. */
    struct stream **at = &all_streams, *last = NULL;
    while (*at) { last = *at; at = &(*at)->next; }
    s->prev = last;
    *at = s;
    pthread_mutex_unlock(&mu);
    ADD(streams, 1);
    *sp = s;
    return 0;
}
int cuStreamSynchronize(void *s) { return sync_all(); }
int cuStreamDestroy_v2(void *sp) {
    struct stream *s = sp;
    pthread_mutex_lock(&mu);
    while (s->head) pop(s);
    if (s->prev) s->prev->next = s->next; else all_streams = s->next;
    if (s->next) s->next->prev = s->prev;
    pthread_mutex_unlock(&mu);
    free(s);
    ADD(streams, -1);
    return 0;
}
int cuStreamWaitEvent(void *sp, void *e, unsigned flags) {
    if (!engines()) return 0;
    struct op *o = calloc(1, sizeof *o);
    if (!o) return 2;
    pthread_mutex_lock(&mu);
    o->kind = OP_WAIT; o->ev = e; o->seq = ((struct ev *)e)->recorded;
    push(sp, o);
    pthread_mutex_unlock(&mu);
    return 0;
}
int cuLaunchHostFunc(void *sp, void (*fn)(void *), void *data) {
    struct op *o = calloc(1, sizeof *o);
    if (!o) return 2;
    o->kind = OP_HOST; o->fn = fn; o->data = data;
    pthread_mutex_lock(&mu);
    if (engines()) push(sp, o); else { o->next = deferred; deferred = o; }
    pthread_mutex_unlock(&mu);
    return 0;
}
int cuEventCreate(void **e, unsigned f) { *e = calloc(1, sizeof(struct ev)); ADD(events, 1); return 0; }
int cuEventRecord(void *e, void *sp) {
    struct ev *v = e;
    if (!engines()) {
        v->t_ms = wall_ms();
        v->done = ++v->recorded;
        return 0;
    }
    struct op *o = calloc(1, sizeof *o);
    if (!o) return 2;
    pthread_mutex_lock(&mu);
    o->kind = OP_RECORD; o->ev = v; o->seq = ++v->recorded;
    push(sp, o);
    pthread_mutex_unlock(&mu);
    return 0;
}
int cuEventSynchronize(void *e) { return sync_all(); }
int cuEventElapsedTime(float *ms, void *a, void *b) {
    struct ev *x = a, *y = b;
    if (x->done < x->recorded || y->done < y->recorded) return 600; /* CUDA_ERROR_NOT_READY */
    *ms = (float)(y->t_ms - x->t_ms);
    return 0;
}
int cuEventDestroy_v2(void *e) { free(e); ADD(events, -1); return 0; }

__attribute__((destructor)) static void report_leaks(void) {
    long v[] = {dev_allocs, host_allocs, registrations, streams, events, ctx_refs};
    const char *n[] = {"device allocations", "pinned host buffers", "host registrations", "streams", "events", "context references"};
    for (int i = 0; i < 6; i++)
        if (v[i] != 0) fprintf(stderr, "fake_cuda: leaked %ld %s\n", v[i], n[i]);
}

/*
 * A stand-in for libcuda.so for the GPU family's plumbing tests (runner/tests/gpu_stub.rs):
 * the driver functions bench-gpu calls, with "device memory" in host memory and copies done
 * synchronously with memcpy, events stamped with CLOCK_MONOTONIC. It measures nothing about
 * any GPU; it lets the whole path (discovery, registration, sweeps, contention, RAII, result
 * shaping, runner) run where no GPU exists.
 *
 * Environment: FAKE_CUDA_DEVICES (default 1), FAKE_CUDA_FREE_MB (free device memory,
 * default 1024). At exit it prints "fake_cuda: leaked ..." to stderr for every kind of
 * resource not released (allocations, host buffers, registrations, streams, events,
 * context references).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long dev_allocs, host_allocs, registrations, streams, events, ctx_refs;
static int ctx_token;

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
int cuDevicePrimaryCtxRetain(void **ctx, int d) { ADD(ctx_refs, 1); *ctx = &ctx_token; return 0; }
int cuDevicePrimaryCtxRelease_v2(int d) { ADD(ctx_refs, -1); return 0; }
int cuCtxSetCurrent(void *ctx) { return 0; }
int cuCtxSynchronize(void) { return 0; }
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
int cuMemcpyHtoDAsync_v2(unsigned long long dst, const void *src, size_t n, void *s) {
    memcpy((void *)(size_t)dst, src, n);
    return 0;
}
int cuMemcpyDtoHAsync_v2(void *dst, unsigned long long src, size_t n, void *s) {
    memcpy(dst, (const void *)(size_t)src, n);
    return 0;
}
int cuStreamCreate(void **s, unsigned f) { *s = malloc(1); ADD(streams, 1); return 0; }
int cuStreamSynchronize(void *s) { return 0; }
int cuStreamDestroy_v2(void *s) { free(s); ADD(streams, -1); return 0; }
int cuEventCreate(void **e, unsigned f) { *e = calloc(1, sizeof(double)); ADD(events, 1); return 0; }
int cuEventRecord(void *e, void *s) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    *(double *)e = t.tv_sec * 1e3 + t.tv_nsec / 1e6;
    return 0;
}
int cuEventSynchronize(void *e) { return 0; }
int cuEventElapsedTime(float *ms, void *a, void *b) { *ms = (float)(*(double *)b - *(double *)a); return 0; }
int cuEventDestroy_v2(void *e) { free(e); ADD(events, -1); return 0; }

__attribute__((destructor)) static void report_leaks(void) {
    long v[] = {dev_allocs, host_allocs, registrations, streams, events, ctx_refs};
    const char *n[] = {"device allocations", "pinned host buffers", "host registrations", "streams", "events", "context references"};
    for (int i = 0; i < 6; i++)
        if (v[i] != 0) fprintf(stderr, "fake_cuda: leaked %ld %s\n", v[i], n[i]);
}

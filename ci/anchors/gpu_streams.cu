// The plain reference for cxlchar's GPU contention figures (ci/compare-gpu.sh): k copies
// of SIZE bytes at once, one per stream, each between its own range of host memory
// registered with cudaHostRegister (as `cxlchar gpu --target anon` registers its region)
// and its own range of one device buffer; timed from an event recorded before the copies
// (the other streams wait on it) to an event after the last one. Prints the aggregate
// bandwidth (k x SIZE over that time, GB = 1e9 B), median of the rounds, and that / k.
//
//   nvcc -O2 -o gpu_streams ci/anchors/gpu_streams.cu
//   gpu_streams DEVICE SIZE_MIB ROUNDS K [K ...]
//
// No gate: the copies are enqueued back to back, so compare sizes whose copies take far
// longer than an enqueue (64 MiB and up).
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <vector>

#define CK(x)                                                                        \
  do {                                                                               \
    cudaError_t e_ = (x);                                                            \
    if (e_ != cudaSuccess) {                                                         \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      exit(1);                                                                       \
    }                                                                                \
  } while (0)

static double one_round(int k, size_t size, bool h2d, char *host, char *dev,
                        std::vector<cudaStream_t> &s, std::vector<cudaEvent_t> &ends,
                        cudaEvent_t e0, cudaEvent_t e1) {
  CK(cudaDeviceSynchronize());
  CK(cudaEventRecord(e0, s[0]));
  for (int i = 1; i < k; i++) CK(cudaStreamWaitEvent(s[i], e0, 0));
  for (int i = 0; i < k; i++) {
    size_t off = (size_t)i * size;
    if (h2d)
      CK(cudaMemcpyAsync(dev + off, host + off, size, cudaMemcpyHostToDevice, s[i]));
    else
      CK(cudaMemcpyAsync(host + off, dev + off, size, cudaMemcpyDeviceToHost, s[i]));
    CK(cudaEventRecord(ends[i], s[i]));
  }
  for (int i = 1; i < k; i++) CK(cudaStreamWaitEvent(s[0], ends[i], 0));
  CK(cudaEventRecord(e1, s[0]));
  CK(cudaEventSynchronize(e1));
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, e0, e1));
  return (double)k * (double)size / (ms * 1e6);  // GB/s
}

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: %s DEVICE SIZE_MIB ROUNDS K [K ...]\n", argv[0]);
    return 2;
  }
  int device = atoi(argv[1]);
  size_t size = (size_t)atol(argv[2]) << 20;
  int rounds = atoi(argv[3]);
  int kmax = 0;
  for (int a = 4; a < argc; a++) kmax = std::max(kmax, atoi(argv[a]));
  if (size == 0 || rounds < 1 || kmax < 1 || kmax > 64) {
    fprintf(stderr, "bad arguments\n");
    return 2;
  }
  CK(cudaSetDevice(device));
  char *host = (char *)malloc(size * kmax);
  if (!host) return 1;
  memset(host, 1, size * kmax);
  CK(cudaHostRegister(host, size * kmax, cudaHostRegisterDefault));
  char *dev = nullptr;
  CK(cudaMalloc(&dev, size * kmax));
  std::vector<cudaStream_t> s(kmax);
  std::vector<cudaEvent_t> ends(kmax);
  for (int i = 0; i < kmax; i++) {
    CK(cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking));
    CK(cudaEventCreate(&ends[i]));
  }
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  printf("dir k aggregate_gbs per_copy_gbs\n");
  for (int d = 0; d < 2; d++) {
    for (int a = 4; a < argc; a++) {
      int k = atoi(argv[a]);
      if (k < 1) continue;
      one_round(k, size, d == 0, host, dev, s, ends, e0, e1);  // warm-up
      std::vector<double> v;
      for (int r = 0; r < rounds; r++) v.push_back(one_round(k, size, d == 0, host, dev, s, ends, e0, e1));
      std::sort(v.begin(), v.end());
      double med = v[v.size() / 2];
      printf("%s %d %.2f %.2f\n", d == 0 ? "h2d" : "d2h", k, med, med / k);
    }
  }
  for (int i = 0; i < kmax; i++) {
    cudaStreamDestroy(s[i]);
    cudaEventDestroy(ends[i]);
  }
  cudaFree(dev);
  cudaHostUnregister(host);
  free(host);
  return 0;
}

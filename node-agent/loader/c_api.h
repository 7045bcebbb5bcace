/* The loader's C ABI (libmodelplane_loader.so), for serving engines and the Python package.
 *
 * One call loads a checkpoint and returns an opaque result that owns the tensors' memory (host
 * or device); tensors are borrowed views of it, valid until mp_loader_result_release drops the
 * last reference. DLPack views take a reference of their own, so a framework may keep a
 * tensor after the caller has released the result.
 *
 * Options are one JSON object (every key optional):
 *   {"device": "cpu" | "none" | "cuda" | "cuda:N", "rank": 0, "world_size": 1,
 *    "rules": "PATTERN=split:DIM;PATTERN=rank:R;PATTERN=replicate",
 *    "request_bytes": 4194304, "queue_depth": 8, "ring_bytes": 0,
 *    "engine": "auto" | "io_uring" | "pread", "io": "auto" | "direct" | "buffered",
 *    "gds": true, "cuda_streams": 2, "coalesce_gap_bytes": 65536}
 *
 * Metrics: an mp_loader_metrics set records loads (mp_loader_metrics_record) and renders them
 * as a Prometheus text exposition (docs/loader.md, "Metrics"); the Python package's collector
 * and the CLI's --metrics-file share it (loader_metrics.h).
 *
 * Thread safety: mp_loader_load may run on several threads at once; a result may be read from
 * several threads; acquire/release are atomic; a metrics set may be recorded into and rendered
 * from several threads at once.
 */
#ifndef MODELPLANE_NODE_AGENT_LOADER_C_API_H_
#define MODELPLANE_NODE_AGENT_LOADER_C_API_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MP_LOADER_ABI_VERSION 2

typedef struct mp_loader_result mp_loader_result;

enum mp_loader_device_type {
  MP_LOADER_DEVICE_CPU = 1,
  MP_LOADER_DEVICE_CUDA = 2,
  MP_LOADER_DEVICE_NONE = 0
};

/* C names for a C ABI. NOLINTNEXTLINE(readability-identifier-naming) */
typedef struct mp_loader_tensor {
  const char* name;
  const char* dtype;   /* safetensors name: "BF16", "F8_E4M3", ... */
  uint32_t dtype_bits; /* element size in bits (4 for F4, 6 for F6_*) */
  int32_t ndim;
  const int64_t* shape; /* ndim entries, the rank's shape */
  void* data;           /* host or device address; NULL for empty tensors and device none */
  uint64_t nbytes;
  int32_t device_type; /* enum mp_loader_device_type */
  int32_t device_index;
} mp_loader_tensor;

uint32_t mp_loader_abi_version(void);

/* Loads `path_count` files (each a .safetensors file, a directory or an index.json). Never
 * returns NULL except when out of memory: a failed load returns a result whose error is set. */
mp_loader_result* mp_loader_load(const char* const* paths, size_t path_count,
                                 const char* options_json);

/* NULL on success, else "code: message"; valid while the result lives. */
const char* mp_loader_result_error(const mp_loader_result* result);
/* 0 on success, else 1 + the core::ErrorCode value. */
int32_t mp_loader_result_error_code(const mp_loader_result* result);

size_t mp_loader_result_tensor_count(const mp_loader_result* result);
/* 0 on success, -1 when index is out of range. */
int32_t mp_loader_result_tensor(const mp_loader_result* result, size_t index,
                                mp_loader_tensor* out);
/* The load's statistics as a JSON object (see load_stats.h). */
const char* mp_loader_result_stats_json(const mp_loader_result* result);

/* A DLPack DLManagedTensor* (DLPack 0.8 ABI) for tensor `index`, holding a reference to the
 * result until its deleter runs; NULL when out of range. F8, F4 and F6 are exported as
 * uint8 bytes (DLPack has no code for them in 0.8), BF16 as kDLBfloat. */
void* mp_loader_result_dlpack(mp_loader_result* result, size_t index);

void mp_loader_result_acquire(mp_loader_result* result);
/* Frees the result and its tensors when the last reference goes. */
void mp_loader_result_release(mp_loader_result* result);

typedef struct mp_loader_metrics mp_loader_metrics;

/* An empty metrics set; NULL when out of memory. */
mp_loader_metrics* mp_loader_metrics_create(void);
void mp_loader_metrics_destroy(mp_loader_metrics* metrics);
/* Adds one load: its figures when it succeeded, a failure (with the rank and device it was
 * asked for and its error code) when it did not. 0 on success, else 1 + the core::ErrorCode
 * value (resource_exhausted: kLoaderMetricsMaxChildren label combinations reached). */
int32_t mp_loader_metrics_record(mp_loader_metrics* metrics, const mp_loader_result* result);
/* The text exposition format 0.0.4 of every load recorded, NUL-terminated; the caller frees it
 * with mp_loader_free. NULL when out of memory. */
char* mp_loader_metrics_text(const mp_loader_metrics* metrics);
void mp_loader_free(void* pointer);

#ifdef __cplusplus
}
#endif

#endif /* MODELPLANE_NODE_AGENT_LOADER_C_API_H_ */

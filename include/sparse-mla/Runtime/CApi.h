/*===- CApi.h - C interface of the sparse-mla runtime ------------*- C -*-===//
 *
 * For the Python layer (ctypes). Every function returns 0 on success and a
 * non-zero code on failure; smla_last_error() then describes the failure of
 * the calling thread.
 *===---------------------------------------------------------------------===*/
#ifndef SPARSE_MLA_RUNTIME_CAPI_H
#define SPARSE_MLA_RUNTIME_CAPI_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct smla_kernel *smla_kernel_t;

/* Loads `path` (PTX or cubin) on `device` and returns its kernel `name`. */
int smla_get_kernel(const char *path, const char *name, int device,
                    smla_kernel_t *out);

/* Launches a kernel on `stream` (a CUstream, 0 for the default stream). */
int smla_launch(smla_kernel_t kernel, unsigned grid_x, unsigned grid_y,
                unsigned grid_z, unsigned block_x, unsigned shared_bytes,
                void *stream, void **params);

/* The message of the last failure on this thread ("" if none). */
const char *smla_last_error(void);

#ifdef __cplusplus
}
#endif

#endif

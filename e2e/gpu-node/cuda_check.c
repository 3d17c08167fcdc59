/* cuda-check: proves a container reached its GPU through the CUDA driver API alone.
 *
 * Loads libcuda.so.1 with dlopen (the driver's CDI spec mounts it and the spec's hooks make the
 * .so.1 link and the ld cache), so the image needs no CUDA toolkit: initialise, take device 0,
 * print its name and UUID in nvidia-smi's form, copy 64 MiB to the GPU and back and compare.
 * Exit 0 and a last line "cuda-check ok ..." only when every call succeeded and the bytes match.
 * Build: gcc -O2 -o cuda-check cuda_check.c -ldl
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext;
typedef unsigned long long CUdeviceptr;
typedef struct { unsigned char bytes[16]; } CUuuid;

#define BYTES (64u << 20)

static void *lib;

static void *symbol(const char *name) {
    void *fn = dlsym(lib, name);
    if (!fn) {
        fprintf(stderr, "cuda-check: libcuda.so.1 has no %s\n", name);
        exit(3);
    }
    return fn;
}

static void check(CUresult rc, const char *call) {
    if (rc != 0) {
        const char *text = "unknown";
        CUresult (*errstr)(CUresult, const char **) = (CUresult(*)(CUresult, const char **))dlsym(lib, "cuGetErrorString");
        if (errstr) errstr(rc, &text);
        fprintf(stderr, "cuda-check: %s failed: %d (%s)\n", call, rc, text);
        exit(4);
    }
}

int main(void) {
    lib = dlopen("libcuda.so.1", RTLD_NOW);
    if (!lib) {
        fprintf(stderr, "cuda-check: dlopen libcuda.so.1: %s\n", dlerror());
        return 2;
    }
    CUresult (*cuInit)(unsigned) = (CUresult(*)(unsigned))symbol("cuInit");
    CUresult (*cuDeviceGetCount)(int *) = (CUresult(*)(int *))symbol("cuDeviceGetCount");
    CUresult (*cuDeviceGet)(CUdevice *, int) = (CUresult(*)(CUdevice *, int))symbol("cuDeviceGet");
    CUresult (*cuDeviceGetName)(char *, int, CUdevice) = (CUresult(*)(char *, int, CUdevice))symbol("cuDeviceGetName");
    CUresult (*cuDeviceGetUuid)(CUuuid *, CUdevice) = (CUresult(*)(CUuuid *, CUdevice))symbol("cuDeviceGetUuid_v2");
    CUresult (*cuCtxCreate)(CUcontext *, unsigned, CUdevice) = (CUresult(*)(CUcontext *, unsigned, CUdevice))symbol("cuCtxCreate_v2");
    CUresult (*cuMemAlloc)(CUdeviceptr *, size_t) = (CUresult(*)(CUdeviceptr *, size_t))symbol("cuMemAlloc_v2");
    CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t) = (CUresult(*)(CUdeviceptr, const void *, size_t))symbol("cuMemcpyHtoD_v2");
    CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t) = (CUresult(*)(void *, CUdeviceptr, size_t))symbol("cuMemcpyDtoH_v2");
    CUresult (*cuMemFree)(CUdeviceptr) = (CUresult(*)(CUdeviceptr))symbol("cuMemFree_v2");
    CUresult (*cuCtxDestroy)(CUcontext) = (CUresult(*)(CUcontext))symbol("cuCtxDestroy_v2");

    int count = 0;
    CUdevice dev;
    CUcontext ctx;
    CUdeviceptr buffer;
    CUuuid uuid;
    char name[256];
    check(cuInit(0), "cuInit");
    check(cuDeviceGetCount(&count), "cuDeviceGetCount");
    check(cuDeviceGet(&dev, 0), "cuDeviceGet");
    check(cuDeviceGetName(name, sizeof name, dev), "cuDeviceGetName");
    check(cuDeviceGetUuid(&uuid, dev), "cuDeviceGetUuid");
    char text[64];
    const unsigned char *b = uuid.bytes;
    snprintf(text, sizeof text, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
    check(cuCtxCreate(&ctx, 0, dev), "cuCtxCreate");
    unsigned char *sent = malloc(BYTES), *back = malloc(BYTES);
    if (!sent || !back) return 5;
    for (unsigned i = 0; i < BYTES; i++) sent[i] = (unsigned char)(i * 2654435761u >> 24);
    memset(back, 0, BYTES);
    check(cuMemAlloc(&buffer, BYTES), "cuMemAlloc");
    check(cuMemcpyHtoD(buffer, sent, BYTES), "cuMemcpyHtoD");
    check(cuMemcpyDtoH(back, buffer, BYTES), "cuMemcpyDtoH");
    check(cuMemFree(buffer), "cuMemFree");
    check(cuCtxDestroy(ctx), "cuCtxDestroy");
    if (memcmp(sent, back, BYTES) != 0) {
        fprintf(stderr, "cuda-check: the %u bytes read back differ from those written\n", BYTES);
        return 6;
    }
    printf("cuda-check ok: %d device(s) visible, device 0 %s (UUID: %s), %u MiB round trip matched\n", count, name,
           text, BYTES >> 20);
    return 0;
}

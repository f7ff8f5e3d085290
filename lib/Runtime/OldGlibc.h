//===- OldGlibc.h - Bind the runtime to old glibc symbol versions ---------===//
//
// Included first in every runtime source (CMakeLists.txt). glibc 2.34 moved
// libdl and libpthread into libc under new symbol versions; a library built
// on a newer system then refuses to load on an older one. The versions below
// exist in every x86-64 glibc since 2.2.5, so the runtime that the wheel
// ships loads on any glibc-based distribution of the last decade
// (tools/build_wheel.py checks the versions the library ends up needing).
//
//===----------------------------------------------------------------------===//
#ifndef SPARSE_MLA_LIB_RUNTIME_OLDGLIBC_H
#define SPARSE_MLA_LIB_RUNTIME_OLDGLIBC_H
#if defined(__x86_64__) && defined(__linux__)
#include <features.h> // defines __GLIBC__ for glibc
#ifdef __GLIBC__
__asm__(".symver dlopen,dlopen@GLIBC_2.2.5");
__asm__(".symver dlsym,dlsym@GLIBC_2.2.5");
__asm__(".symver dlclose,dlclose@GLIBC_2.2.5");
__asm__(".symver dlerror,dlerror@GLIBC_2.2.5");
__asm__(".symver pthread_once,pthread_once@GLIBC_2.2.5");
#endif
#endif
#endif

/*
 * Export macros: which declarations of ffijit's headers belong to the public binary interface.
 *
 * C99 and C++ compatible. Every library is compiled with hidden symbols by default; only what is
 * marked here is exported. Each library has its own macro because on Windows a declaration is
 * dllexport inside the library that defines it and dllimport everywhere else (including the other
 * ffijit libraries). The defines FFIJIT_BUILDING_RUNTIME / _REFLECT / _JIT are set by CMake on the
 * code linked into that library (its object library, and ffijit's own tests of its internals,
 * which link those objects); consumers of the installed libraries never set them. On ELF both
 * directions are default visibility.
 *
 *   FFIJIT_API          libffijit_runtime: the TVM FFI C ABI (TVMFFI*), FFIJIT* C extensions and
 *                       the C++ value/object/function classes
 *   FFIJIT_REFLECT_API  libffijit_reflect: the Signature model and the metadata parsers/printers
 *   FFIJIT_JIT_API      libffijit_jit: registration (C and C++), the executors, the JIT tier
 */
#ifndef FFIJIT_EXPORT_H_
#define FFIJIT_EXPORT_H_

#if defined(_WIN32)
#define FFIJIT_DLL_EXPORT __declspec(dllexport)
#define FFIJIT_DLL_IMPORT __declspec(dllimport)
#else
#define FFIJIT_DLL_EXPORT __attribute__((visibility("default")))
#define FFIJIT_DLL_IMPORT __attribute__((visibility("default")))
#endif

#ifdef FFIJIT_BUILDING_RUNTIME
#define FFIJIT_API FFIJIT_DLL_EXPORT
#else
#define FFIJIT_API FFIJIT_DLL_IMPORT
#endif

#ifdef FFIJIT_BUILDING_REFLECT
#define FFIJIT_REFLECT_API FFIJIT_DLL_EXPORT
#else
#define FFIJIT_REFLECT_API FFIJIT_DLL_IMPORT
#endif

#ifdef FFIJIT_BUILDING_JIT
#define FFIJIT_JIT_API FFIJIT_DLL_EXPORT
#else
#define FFIJIT_JIT_API FFIJIT_DLL_IMPORT
#endif

#endif /* FFIJIT_EXPORT_H_ */

// The entry point libFuzzer offers a program with its own `main` (LLVM's libFuzzer manual,
// "Using libFuzzer as a library"): it reads the command line as libFuzzer's own `main` would and
// runs `callback` on every input. SwiftPM links an executable's `main` to the module's `@main`,
// so the fuzz targets start libFuzzer through this (FuzzSupport's `runLibFuzzer`).
#ifndef PLUMB_CLIBFUZZER_SHIM_H
#define PLUMB_CLIBFUZZER_SHIM_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv,
                        int (*callback)(const uint8_t *data, size_t size));

#endif

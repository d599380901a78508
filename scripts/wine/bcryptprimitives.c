/* Wine 8 has no ProcessPrng (bcryptprimitives.dll), which Rust's standard
 * library calls for random bytes since Rust 1.78. This stand-in forwards to
 * RtlGenRandom (SystemFunction036 in advapi32), which Wine has. Built with
 * mingw by scripts/wine/prefix and copied into the Wine prefix's system32. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
  while (length > 0) {
    ULONG chunk = length > 0x7fffffff ? 0x7fffffff : (ULONG)length;
    if (!SystemFunction036(data, chunk)) return FALSE;
    data += chunk;
    length -= chunk;
  }
  return TRUE;
}

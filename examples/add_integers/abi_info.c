/* Header-only use of packedfun (CMake target packedfun::headers): the C ABI's version and sizes. */
#include <packedfun/c_api.h>
#include <stdio.h>

int main(void) {
  printf("ABI %d.%d, sizeof(PFAny) = %u\n", PACKEDFUN_ABI_VERSION_MAJOR,
         PACKEDFUN_ABI_VERSION_MINOR, (unsigned)sizeof(PFAny));
  return 0;
}

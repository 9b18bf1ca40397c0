/*
 * `_dl_find_object` for static musl builds of vx (scripts/build-release).
 *
 * Debian's GCC 12 builds its unwinder (libgcc_eh.a, which the musl builds
 * link as `libunwind.a` because Rust's std asks for that name on musl) for
 * glibc 2.35+, so it finds a PC's unwind tables through glibc's
 * `_dl_find_object`. musl has no such function; this one answers the same
 * question from `dl_iterate_phdr`, which musl has, so a panic unwinds and a
 * backtrace prints instead of the link failing.
 *
 * It also references the pthread functions the unwinder calls through weak
 * symbols: in a static link a weak reference alone pulls nothing from
 * libc.a, and the unwinder would call address 0 on its first use.
 */
#define _GNU_SOURCE
#include <link.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* glibc's layout (dlfcn.h) on x86_64 and aarch64: no eh_dbase, no count. */
struct dl_find_object {
  unsigned long long dlfo_flags;
  void *dlfo_map_start;
  void *dlfo_map_end;
  void *dlfo_link_map;
  void *dlfo_eh_frame;
  unsigned long long dlfo_reserved[7];
};

struct query {
  uintptr_t pc;
  struct dl_find_object *out;
  int found;
};

static int visit(struct dl_phdr_info *info, size_t size, void *data) {
  struct query *q = data;
  uintptr_t lo = UINTPTR_MAX, hi = 0, eh = 0;
  int hit = 0;
  (void)size;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *p = &info->dlpi_phdr[i];
    uintptr_t start = info->dlpi_addr + p->p_vaddr;
    if (p->p_type == PT_LOAD) {
      if (start < lo) lo = start;
      if (start + p->p_memsz > hi) hi = start + p->p_memsz;
      if (q->pc >= start && q->pc < start + p->p_memsz) hit = 1;
    } else if (p->p_type == PT_GNU_EH_FRAME) {
      eh = start;
    }
  }
  if (!hit) return 0;
  q->out->dlfo_flags = 0;
  q->out->dlfo_map_start = (void *)lo;
  q->out->dlfo_map_end = (void *)hi;
  q->out->dlfo_link_map = NULL;
  q->out->dlfo_eh_frame = (void *)eh;
  q->found = 1;
  return 1;
}

int _dl_find_object(void *pc, struct dl_find_object *result) {
  struct query q = {(uintptr_t)pc, result, 0};
  dl_iterate_phdr(visit, &q);
  return q.found ? 0 : -1;
}

void *const vx_unwinder_pthread_refs[] = {
    (void *)pthread_once,         (void *)pthread_key_create,
    (void *)pthread_getspecific,  (void *)pthread_setspecific,
    (void *)pthread_mutex_lock,   (void *)pthread_mutex_unlock,
    (void *)pthread_key_delete,
};

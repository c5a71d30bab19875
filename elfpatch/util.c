/* util.c: the small things every part of elfpatch uses.
 *
 * Fields of an ELF file are in the file's byte order, which need not be
 * the host's: get_* and put_* convert explicitly, byte by byte, so the
 * same code serves both orders and never makes an unaligned access.
 * Messages follow one pattern, "elfpatch: warning: FILE: ..." for
 * warnings (silenced by -q) and "elfpatch: FILE: ..." for what -v
 * reports; errors go through error(3) at the place they happen.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elfpatch.h"

/* The N-byte unsigned number at P, most significant byte first when MSB.  */
static uint64_t
get_bytes (const unsigned char *p, int n, int msb)
{
  uint64_t v = 0;
  for (int i = 0; i < n; i++)
    v = v << 8 | p[msb ? i : n - 1 - i];
  return v;
}

static void
put_bytes (unsigned char *p, int n, uint64_t v, int msb)
{
  for (int i = 0; i < n; i++)
    p[msb ? n - 1 - i : i] = (unsigned char) (v >> (8 * i));
}

/* Whether ELF's identification says ELFDATA2MSB.  */
int
elf_msb (Elf *elf)
{
  const char *id = elf_getident (elf, NULL);
  return id != NULL && id[EI_DATA] == ELFDATA2MSB;
}

uint16_t
get_u16 (const unsigned char *p, int msb)
{
  return (uint16_t) get_bytes (p, 2, msb);
}

uint32_t
get_u32 (const unsigned char *p, int msb)
{
  return (uint32_t) get_bytes (p, 4, msb);
}

uint64_t
get_u64 (const unsigned char *p, int msb)
{
  return get_bytes (p, 8, msb);
}

void
put_u16 (unsigned char *p, uint16_t v, int msb)
{
  put_bytes (p, 2, v, msb);
}

void
put_u32 (unsigned char *p, uint32_t v, int msb)
{
  put_bytes (p, 4, v, msb);
}

void
put_u64 (unsigned char *p, uint64_t v, int msb)
{
  put_bytes (p, 8, v, msb);
}

int
array_reserve (void **array, size_t *alloc, size_t n, size_t elsize)
{
  if (n < *alloc)
    return 0;
  size_t more = *alloc ? 2 * *alloc : 16;
  if (more > SIZE_MAX / elsize)
    {
      errno = ENOMEM;
      return -1;
    }
  void *p = realloc (*array, more * elsize);
  if (p == NULL)
    return -1;
  *array = p;
  *alloc = more;
  return 0;
}

int
read_at (const unsigned char *buf, int fd, uint64_t offset, void *out,
         size_t len)
{
  if (buf != NULL)
    {
      memcpy (out, buf + offset, len);
      return 0;
    }
  size_t done = 0;
  while (done < len)
    {
      ssize_t n = pread (fd, (char *) out + done, len - done,
                         (off_t) (offset + done));
      if (n < 0 && errno == EINTR)
        continue;
      if (n == 0)
        errno = EIO;            /* the file is shorter than it said */
      if (n <= 0)
        return -1;
      done += (size_t) n;
    }
  return 0;
}

Elf_Data *
pt_note_data (Elf *elf, size_t i, uint64_t file_size, GElf_Phdr *ph)
{
  if (gelf_getphdr (elf, (int) i, ph) == NULL || ph->p_type != PT_NOTE
      || ph->p_filesz > file_size || ph->p_offset > file_size - ph->p_filesz)
    return NULL;
  return elf_getdata_rawchunk (elf, (int64_t) ph->p_offset, ph->p_filesz,
                               ph->p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
}

int
u64_cmp (const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
  return x < y ? -1 : x > y;
}

int
indexed_cmp (const void *a, const void *b)
{
  const struct indexed *x = a, *y = b;
  if (x->value != y->value)
    return x->value < y->value ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

int
vaddr_offset (Elf *elf, uint64_t addr, uint64_t *offset)
{
  size_t phnum;
  if (elf_getphdrnum (elf, &phnum) != 0)
    return -1;
  for (size_t i = 0; i < phnum; i++)
    {
      GElf_Phdr ph;
      if (gelf_getphdr (elf, (int) i, &ph) != NULL && ph.p_type == PT_LOAD
          && addr >= ph.p_vaddr && addr - ph.p_vaddr < ph.p_filesz)
        {
          *offset = addr - ph.p_vaddr + ph.p_offset;
          return 0;
        }
    }
  return -1;
}

int
page_range_cmp (const void *a, const void *b)
{
  const struct page_range *x = a, *y = b;
  return x->first < y->first ? -1 : x->first > y->first;
}

uint64_t
bits_count (const unsigned char *bits, uint64_t from, uint64_t to)
{
  uint64_t n = 0;
  for (uint64_t page = from; page < to; page++)
    n += (uint64_t) pbitmap_test (bits, page);
  return n;
}

uint64_t
bits_runs (const unsigned char *bits, uint64_t capacity)
{
  uint64_t runs = 0;
  for (uint64_t page = 0; page < capacity; page++)
    if (pbitmap_test (bits, page) && (page == 0
                                      || !pbitmap_test (bits, page - 1)))
      runs++;
  return runs;
}

static void
vmessage (const char *kind, const char *fmt, va_list ap)
{
  fflush (stdout);
  fprintf (stderr, "%s: %s", program_invocation_name, kind);
  vfprintf (stderr, fmt, ap);
  fputc ('\n', stderr);
}

void
elfpatch_warn (const char *fmt, ...)
{
  if (elfpatch_quiet)
    return;
  va_list ap;
  va_start (ap, fmt);
  vmessage ("warning: ", fmt, ap);
  va_end (ap);
}

void
elfpatch_note (const char *fmt, ...)
{
  if (elfpatch_verbose <= 0)
    return;
  va_list ap;
  va_start (ap, fmt);
  vmessage ("", fmt, ap);
  va_end (ap);
}

ssize_t
read_head (const char *path, char *buf, size_t size)
{
  struct stat st;
  int fd = open (path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return -1;
  ssize_t got = -1;
  if (fstat (fd, &st) == 0 && S_ISREG (st.st_mode))
    {
      size_t done = 0;
      ssize_t n = 0;
      while (done < size
             && ((n = read (fd, buf + done, size - done)) > 0
                 || (n < 0 && errno == EINTR)))
        done += n > 0 ? (size_t) n : 0;
      got = n < 0 ? -1 : (ssize_t) done;
    }
  close (fd);
  return got;
}

int
starts_with (const char *path, const char *prefix, size_t len)
{
  char buf[16];
  if (len > sizeof buf)
    return -1;
  ssize_t got = read_head (path, buf, len);
  if (got < 0)
    return -1;
  return (size_t) got == len && memcmp (buf, prefix, len) == 0;
}

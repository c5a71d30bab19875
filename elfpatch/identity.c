/* identity.c: say which build of a file a trace belongs to.
 *
 * A trace is only valid for the exact file it was recorded on, so every
 * block of a trace carries the identity of its file and a fill uses only
 * the blocks whose identity equals the binary's.  The identity is the
 * file's NT_GNU_BUILD_ID note, found through PT_NOTE program headers
 * (which survive stripping) and, failing that, SHT_NOTE sections.  A file
 * without one is identified by its size and FNV-1a 64 hash, in which the
 * bytes a fill may change (region offsets 40 to the region's end, when
 * the file has a valid region) count as zero: filling a file must not
 * change the identity its traces are bound to.
 *
 * --record computes identities from open files (any file may be mapped,
 * ELF or not, large or small, so it reads in chunks) and locates the
 * region itself; an image (image.c) has the binary in memory and its
 * region located once, and hands it over.  Both go through the same code.
 */

#include <errno.h>
#include <error.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "elfpatch.h"

/* Looks for NT_GNU_BUILD_ID among the notes in DATA.  */
static int
build_id_in_notes (Elf_Data *data, struct identity *id)
{
  size_t offset = 0, name_off, desc_off;
  GElf_Nhdr nhdr;
  while (offset < data->d_size
         && (offset = gelf_getnote (data, offset, &nhdr, &name_off,
                                    &desc_off)) > 0)
    {
      const char *name = (const char *) data->d_buf + name_off;
      if (nhdr.n_type == NT_GNU_BUILD_ID && nhdr.n_namesz == 4
          && memcmp (name, "GNU", 4) == 0 && nhdr.n_descsz > 0
          && nhdr.n_descsz <= IDENTITY_BUILD_ID_MAX)
        {
          memcpy (id->build_id, (const char *) data->d_buf + desc_off,
                  nhdr.n_descsz);
          id->build_id_len = nhdr.n_descsz;
          return 1;
        }
    }
  return 0;
}

static int
find_build_id (Elf *elf, uint64_t file_size, struct identity *id)
{
  size_t phnum;
  if (elf_getphdrnum (elf, &phnum) == 0)
    for (size_t i = 0; i < phnum; i++)
      {
        GElf_Phdr ph;
        Elf_Data *data = pt_note_data (elf, i, file_size, &ph);
        if (data != NULL && build_id_in_notes (data, id))
          return 1;
      }

  Elf_Scn *scn = NULL;
  while ((scn = elf_nextscn (elf, scn)) != NULL)
    {
      GElf_Shdr sh;
      if (gelf_getshdr (scn, &sh) == NULL || sh.sh_type != SHT_NOTE)
        continue;
      Elf_Data *data = elf_getdata (scn, NULL);
      if (data != NULL && build_id_in_notes (data, id))
        return 1;
    }
  return 0;
}

/* What the hash sees instead of the file's bytes: [ZERO_FROM, ZERO_TO)
   as zero bytes, and the LEN bytes at AT as BYTES.  */
struct hash_view
{
  uint64_t zero_from;
  uint64_t zero_to;
  uint64_t at;
  size_t len;
  unsigned char bytes[64];
};

/* H advanced over the LEN bytes at P, or LEN zero bytes when P is null.  */
static uint64_t
fnv1a64_span (uint64_t h, const unsigned char *p, size_t len)
{
  const uint64_t prime = 0x100000001b3u;
  if (p == NULL)
    for (size_t i = 0; i < len; i++)
      h *= prime;
  else
    for (size_t i = 0; i < len; i++)
      h = (h ^ p[i]) * prime;
  return h;
}

/* The first offset past AT and before END where what V shows changes
   kind (file bytes, zeros, replaced bytes), or END.  */
static uint64_t
view_edge (const struct hash_view *v, uint64_t at, uint64_t end)
{
  const uint64_t edges[] = { v->zero_from, v->zero_to, v->at,
                             v->at + v->len };
  for (size_t i = 0; i < sizeof edges / sizeof *edges; i++)
    if (edges[i] > at && edges[i] < end)
      end = edges[i];
  return end;
}

/* H advanced over the bytes at offsets [POS, END) as V shows them, P
   holding the file's.  Each span between V's edges is one kind, so the
   byte loops test nothing per byte.  */
static uint64_t
fnv1a64_view (uint64_t h, const unsigned char *p, uint64_t pos, uint64_t end,
              const struct hash_view *v)
{
  for (uint64_t at = pos; at < end;)
    {
      uint64_t to = view_edge (v, at, end);
      size_t len = (size_t) (to - at);
      if (at >= v->at && at - v->at < v->len)
        h = fnv1a64_span (h, v->bytes + (at - v->at), len);
      else if (at >= v->zero_from && at < v->zero_to)
        h = fnv1a64_span (h, NULL, len);
      else
        h = fnv1a64_span (h, p + (at - pos), len);
      at = to;
    }
  return h;
}

/* FNV-1a 64 over SIZE bytes of CONTENTS or FD, as V shows them.  */
static int
hash_file (const unsigned char *contents, int fd, uint64_t size,
           const struct hash_view *v, uint64_t *out)
{
  static unsigned char chunk[1 << 16];
  uint64_t h = 0xcbf29ce484222325u;
  for (uint64_t pos = 0; pos < size;)
    {
      size_t len = size - pos < sizeof chunk ? (size_t) (size - pos)
                                             : sizeof chunk;
      const unsigned char *p;
      if (contents != NULL)
        p = contents + pos;
      else
        {
          if (read_at (NULL, fd, pos, chunk, len) != 0)
            return -1;
          p = chunk;
        }
      h = fnv1a64_view (h, p, pos, pos + len, v);
      pos += len;
    }
  *out = h;
  return 0;
}

/* The bytes a fill may write of R, the region of ELF (null: none),
   count as zero; and a file whose program header is stale hashes as it
   will be once elfpatch --resync has pointed the header at the note, so
   that a trace recorded before the re-sync still fits the file after
   it.  */
static int
hash_view_of_region (Elf *elf, const unsigned char *contents, int fd,
                     uint64_t size, const struct region *r,
                     struct hash_view *v)
{
  if (r == NULL)
    return 0;
  v->zero_from = r->offset + PBITMAP_OFF_PAGES_SET;
  v->zero_to = r->offset + r->size;
  uint64_t at;
  size_t len;
  if (!r->stale || region_phdr_at (elf, size, r, &at, &len) != 0
      || len > sizeof v->bytes)
    return 0;
  if (read_at (contents, fd, at, v->bytes, len) != 0)
    return -1;
  if (region_phdr_encode (elf, v->bytes, r) == 0)
    {
      v->at = at;
      v->len = len;
    }
  return 0;
}

static int
identity_of (const char *path, Elf *elf, const unsigned char *contents,
             int fd, uint64_t size, const struct region *r,
             struct identity *id)
{
  struct hash_view v = { 0 };
  if (elf != NULL && hash_view_of_region (elf, contents, fd, size, r, &v) != 0)
    {
      error (0, errno, "error: %s", path);
      return -1;
    }
  id->size = size;
  if (hash_file (contents, fd, size, &v, &id->fnv1a64) != 0)
    {
      error (0, errno, "error: %s", path);
      return -1;
    }
  return 0;
}

int
identity_compute (const char *path, Elf *elf, const unsigned char *contents,
                  int fd, uint64_t size, struct identity *id)
{
  memset (id, 0, sizeof *id);
  if (elf != NULL && find_build_id (elf, size, id))
    return 0;
  struct region r;
  char why[512];
  int rc = elf == NULL ? -1 : region_find (elf, contents, fd, size, &r, why,
                                           sizeof why);
  return identity_of (path, elf, contents, fd, size,
                      rc == 0 || rc == REGION_STALE ? &r : NULL, id);
}

int
identity_of_region (const char *path, Elf *elf, const unsigned char *contents,
                    uint64_t size, const struct region *r,
                    struct identity *id)
{
  memset (id, 0, sizeof *id);
  if (find_build_id (elf, size, id))
    return 0;
  return identity_of (path, elf, contents, -1, size, r, id);
}

int
identity_equal (const struct identity *a, const struct identity *b)
{
  if (a->build_id_len != b->build_id_len)
    return 0;
  if (a->build_id_len != 0)
    return memcmp (a->build_id, b->build_id, a->build_id_len) == 0;
  return a->size == b->size && a->fnv1a64 == b->fnv1a64;
}

void
identity_format (const struct identity *id, char *buf, size_t bufsize)
{
  if (id->build_id_len == 0)
    {
      snprintf (buf, bufsize, "size %" PRIu64 " fnv1a64 %016" PRIx64,
                id->size, id->fnv1a64);
      return;
    }
  size_t n = (size_t) snprintf (buf, bufsize, "build-id ");
  for (size_t i = 0; i < id->build_id_len && n + 3 <= bufsize; i++)
    n += (size_t) snprintf (buf + n, bufsize - n, "%02x", id->build_id[i]);
}

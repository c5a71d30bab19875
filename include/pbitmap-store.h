/* pbitmap-store.h: the bitmap store, for programs that are not relinked.
 *
 * A file the package manager owns must not be rewritten (an upgrade
 * replaces it, dpkg --verify flags it), so its bitmap lives beside it in a
 * store: a directory with one file, an *entry*, per object, named after
 * the object's identity (the build-id, or the size and hash a trace uses;
 * doc/format.md, section 5).  Looking an object up is one open of a name
 * computed from its build-id: O(1) in the store's size, and nothing is
 * hashed for an object that has a build-id.
 *
 * An entry is little-endian:
 *
 *    0  u8[8] magic          "PBMSTORE"
 *    8  u32   version        1
 *   12  u32   region_offset  offset of the region, a multiple of 8
 *   16  u32   id_len         bytes of build-id; 0: size and hash identify
 *   20  u32   path_len       bytes of the object's path (no NUL)
 *   24  u64   object_size    the object's size in bytes when stored
 *   32  u64   object_fnv1a64 its hash (identity without build-id), else 0
 *   40  u64   region_size    bytes from region_offset to the end of file
 *   48  u64   reserved[2]    0
 *   64  u8    build_id[id_len], path[path_len], NUL, zeros to region_offset
 *
 * and the region is a region of doc/format.md section 2, byte for byte
 * (note header, 96-byte header, bits, padding to 16), little-endian,
 * with entry and mark 0 and capacity the object's pages when stored.
 *
 * This header is freestanding: the audit module (audit/) uses it without
 * a C library.
 */
#ifndef PBITMAP_STORE_H
#define PBITMAP_STORE_H

#include <stdint.h>

#include "pbitmap-format.h"

#define PBITMAP_STORE_MAGIC "PBMSTORE"
#define PBITMAP_STORE_VERSION 1u
#define PBITMAP_STORE_HEADER_SIZE 64u
/* An entry's longest path, and the largest entry a reader takes: the
   region of an object of 4 GiB (2^20 pages) and a path.  */
#define PBITMAP_STORE_PATH_MAX 4096u
#define PBITMAP_STORE_ENTRY_MAX \
  (PBITMAP_STORE_HEADER_SIZE + 256u + PBITMAP_STORE_PATH_MAX + 8u \
   + PBITMAP_HEADER_SIZE + (1u << 17) + 16u)

#define PBITMAP_STORE_OFF_VERSION 8
#define PBITMAP_STORE_OFF_REGION_OFFSET 12
#define PBITMAP_STORE_OFF_ID_LEN 16
#define PBITMAP_STORE_OFF_PATH_LEN 20
#define PBITMAP_STORE_OFF_OBJECT_SIZE 24
#define PBITMAP_STORE_OFF_OBJECT_FNV 32
#define PBITMAP_STORE_OFF_REGION_SIZE 40

/* An entry's name: "HEX.bitmap" for a build-id, "size-N-HASH.bitmap"
   otherwise (HASH 16 hex digits).  Longest: a 256-byte build-id.  */
#define PBITMAP_STORE_SUFFIX ".bitmap"
#define PBITMAP_STORE_NAME_MAX (2u * 256u + 8u)

/* Writes the entry name of BUILD_ID (LEN bytes, 1 to 256) into NAME
   (PBITMAP_STORE_NAME_MAX bytes).  */
static inline void
pbitmap_store_name_build_id (char *name, const unsigned char *build_id,
                             unsigned len)
{
  static const char hex[] = "0123456789abcdef";
  char *p = name;
  for (unsigned i = 0; i < len; i++)
    {
      *p++ = hex[build_id[i] >> 4];
      *p++ = hex[build_id[i] & 15];
    }
  for (const char *s = PBITMAP_STORE_SUFFIX; *s != '\0'; s++)
    *p++ = *s;
  *p = '\0';
}

static inline uint32_t
pbitmap_store_u32 (const unsigned char *p)
{
  return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16
         | (uint32_t) p[3] << 24;
}

static inline uint64_t
pbitmap_store_u64 (const unsigned char *p)
{
  return pbitmap_store_u32 (p) | (uint64_t) pbitmap_store_u32 (p + 4) << 32;
}

/* What is wrong with the entry of SIZE bytes at E, the first defect in
   the order the fields come; PBITMAP_STORE_OK when nothing is.  Checks
   the layout and the region's header as doc/format.md says, not whose
   entry it is: the reader compares the identity itself.  */
enum pbitmap_store_defect
{
  PBITMAP_STORE_OK,
  PBITMAP_STORE_TRUNCATED,
  PBITMAP_STORE_BAD_MAGIC,
  PBITMAP_STORE_BAD_VERSION,
  PBITMAP_STORE_BAD_LAYOUT,
  PBITMAP_STORE_BAD_REGION
};

static inline enum pbitmap_store_defect
pbitmap_store_check (const unsigned char *e, uint64_t size)
{
  const char *magic = PBITMAP_STORE_MAGIC;
  if (size < PBITMAP_STORE_HEADER_SIZE)
    return PBITMAP_STORE_TRUNCATED;
  for (unsigned i = 0; i < 8; i++)
    if (e[i] != (unsigned char) magic[i])
      return PBITMAP_STORE_BAD_MAGIC;
  if (pbitmap_store_u32 (e + PBITMAP_STORE_OFF_VERSION)
      != PBITMAP_STORE_VERSION)
    return PBITMAP_STORE_BAD_VERSION;
  uint64_t region = pbitmap_store_u32 (e + PBITMAP_STORE_OFF_REGION_OFFSET);
  uint64_t id_len = pbitmap_store_u32 (e + PBITMAP_STORE_OFF_ID_LEN);
  uint64_t path_len = pbitmap_store_u32 (e + PBITMAP_STORE_OFF_PATH_LEN);
  uint64_t region_size = pbitmap_store_u64 (e + PBITMAP_STORE_OFF_REGION_SIZE);
  if (id_len > 256 || path_len > PBITMAP_STORE_PATH_MAX || region % 8 != 0
      || region < PBITMAP_STORE_HEADER_SIZE + id_len + path_len + 1
      || region_size < PBITMAP_HEADER_SIZE || region > size
      || region_size != size - region
      || e[PBITMAP_STORE_HEADER_SIZE + id_len + path_len] != '\0')
    return region > size || region_size > size - region
           ? PBITMAP_STORE_TRUNCATED : PBITMAP_STORE_BAD_LAYOUT;
  struct pbitmap_header h;
  const unsigned char *r = e + region;
  h.n_namesz = pbitmap_store_u32 (r + PBITMAP_OFF_NAMESZ);
  h.n_descsz = pbitmap_store_u32 (r + PBITMAP_OFF_DESCSZ);
  h.n_type = pbitmap_store_u32 (r + PBITMAP_OFF_TYPE);
  for (unsigned i = 0; i < 8; i++)
    h.n_name[i] = (char) r[PBITMAP_OFF_NAME + i];
  h.magic = pbitmap_store_u32 (r + PBITMAP_OFF_MAGIC);
  h.version = (uint16_t) (r[PBITMAP_OFF_VERSION]
                          | r[PBITMAP_OFF_VERSION + 1] << 8);
  h.header_size = (uint16_t) (r[PBITMAP_OFF_HEADER_SIZE]
                              | r[PBITMAP_OFF_HEADER_SIZE + 1] << 8);
  h.page_shift = pbitmap_store_u32 (r + PBITMAP_OFF_PAGE_SHIFT);
  h.capacity = pbitmap_store_u64 (r + PBITMAP_OFF_CAPACITY);
  h.order_size = pbitmap_store_u32 (r + PBITMAP_OFF_ORDER_SIZE);
  h.order_len = pbitmap_store_u32 (r + PBITMAP_OFF_ORDER_LEN);
  if (pbitmap_header_check (&h, region_size) != PBITMAP_HEADER_OK)
    return PBITMAP_STORE_BAD_REGION;
  return PBITMAP_STORE_OK;
}

#endif /* PBITMAP_STORE_H */

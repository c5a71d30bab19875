/* image.c: open an ELF file with its pbitmap region and identity.
 *
 * The whole file is read into memory and handed to libelf with
 * elf_memory, which only reads it; the region's bytes are then patched in
 * that same buffer and update.c writes the buffer out.  Reading once
 * gives one consistent snapshot: what is checked is what is written.
 *
 * The region is located and checked once per open (region.c), and the
 * file's identity (identity.c) is computed from that same region.  An
 * image is opened for an update with an exclusive flock (see update.c).
 */

#include <errno.h>
#include <error.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "elfpatch.h"

/* Opens PATH; for an update also takes the exclusive lock, on the inode
   that PATH still names once the lock is held (a concurrent elfpatch may
   have renamed a new file over it while we waited).  */
static int
open_locked (const char *path, int for_update, struct stat *st)
{
  for (int attempt = 0; attempt < 100; attempt++)
    {
      /* O_NONBLOCK: a FIFO must be refused, not waited on.  */
      int fd = open (path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
      if (fd < 0)
        {
          error (0, errno, "error: %s", path);
          return -1;
        }
      if (fstat (fd, st) != 0)
        {
          error (0, errno, "error: %s", path);
          close (fd);
          return -1;
        }
      if (S_ISDIR (st->st_mode) || !S_ISREG (st->st_mode))
        {
          error (0, S_ISDIR (st->st_mode) ? EISDIR : 0, "error: %s%s", path,
                 S_ISDIR (st->st_mode) ? "" : ": not a regular file");
          close (fd);
          return -1;
        }
      if (!for_update)
        return fd;

      int rc;
      while ((rc = flock (fd, LOCK_EX)) != 0 && errno == EINTR)
        ;
      struct stat now;
      if (rc != 0 || stat (path, &now) != 0)
        {
          error (0, errno, "error: %s", path);
          close (fd);
          return -1;
        }
      if (now.st_dev == st->st_dev && now.st_ino == st->st_ino)
        return fd;
      close (fd);
    }
  error (0, 0, "error: %s: keeps being replaced while waiting for its lock",
         path);
  return -1;
}


static int
read_whole (struct image *img)
{
  img->size = (size_t) img->st.st_size;
  img->buf = malloc (img->size ? img->size : 1);
  if (img->buf == NULL)
    {
      error (0, errno, "error: %s", img->path);
      return -1;
    }
  size_t done = 0;
  while (done < img->size)
    {
      ssize_t n = read (img->fd, img->buf + done, img->size - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          error (0, errno, "error: %s", img->path);
          return -1;
        }
      if (n == 0)
        break;
      done += (size_t) n;
    }
  if (done != img->size)
    {
      error (0, 0, "error: %s: file changed size while being read",
             img->path);
      return -1;
    }
  return 0;
}

/* Says why libelf did not take IMG as ELF: a file with the ELF magic
   and a class, byte order or version libelf does not know is named as
   such, anything else is not ELF.  */
static void
ident_error (const struct image *img)
{
  const unsigned char *id = img->buf;
  if (img->size < EI_NIDENT || memcmp (id, ELFMAG, SELFMAG) != 0)
    error (0, 0, "error: %s: not an ELF file", img->path);
  else if (id[EI_CLASS] != ELFCLASS32 && id[EI_CLASS] != ELFCLASS64)
    error (0, 0, "error: %s: unknown ELF class %u", img->path, id[EI_CLASS]);
  else if (id[EI_DATA] != ELFDATA2LSB && id[EI_DATA] != ELFDATA2MSB)
    error (0, 0, "error: %s: unknown ELF byte order %u", img->path,
           id[EI_DATA]);
  else
    error (0, 0, "error: %s: unsupported ELF version %u", img->path,
           id[EI_VERSION]);
}

int
image_open (const char *path, int flags, struct image *img)
{
  memset (img, 0, sizeof *img);
  img->path = path;
  img->fd = open_locked (path, flags & IMAGE_UPDATE, &img->st);
  if (img->fd < 0 || read_whole (img) != 0)
    return -1;

  elf_version (EV_CURRENT);
  img->elf = elf_memory ((char *) img->buf, img->size);
  if (img->elf == NULL)
    {
      error (0, 0, "error: %s: %s", path, elf_errmsg (-1));
      return -1;
    }
  if (elf_kind (img->elf) != ELF_K_ELF)
    {
      ident_error (img);
      return -1;
    }
  GElf_Ehdr ehdr;
  if (gelf_getehdr (img->elf, &ehdr) == NULL)
    {
      error (0, 0, "error: %s: %s", path, elf_errmsg (-1));
      return -1;
    }
  img->msb = ehdr.e_ident[EI_DATA] == ELFDATA2MSB;
  img->elfclass = ehdr.e_ident[EI_CLASS];

  char why[512];
  int rc;
  img->debug_file = image_is_debug_file (img->elf);
  if (img->debug_file && (flags & IMAGE_UPDATE))
    {
      error (0, 0, "error: %s: a separate debug file (objcopy "
             "--only-keep-debug, eu-strip -f) holds a copy of the region, "
             "which nothing reads; change the program instead", path);
      return -1;
    }
  if (img->debug_file)
    rc = region_find_debug (img->elf, img->buf, img->size, &img->region, why,
                            sizeof why);
  else
    rc = region_find (img->elf, img->buf, -1, img->size, &img->region, why,
                      sizeof why);
  struct region found = img->region;
  if (rc != 0 && (flags & IMAGE_ANY_REGION))
    {
      memset (&img->region, 0, sizeof img->region);
      img->region.hdr.capacity = (img->size + PBITMAP_PAGE_SIZE - 1)
                                 >> PBITMAP_PAGE_SHIFT;
    }
  else if (rc != 0 && !(rc == REGION_STALE && (flags & IMAGE_STALE)))
    {
      error (0, 0, "error: %s: %s", path, why);
      return -1;
    }
  /* A debug file's region is the section's copy, not the one a hash
     of the file leaves out: identity_compute locates that itself.  */
  if (img->debug_file)
    return identity_compute (path, img->elf, img->buf, -1, img->size,
                             &img->id);
  return identity_of_region (path, img->elf, img->buf, img->size,
                             rc == 0 || rc == REGION_STALE ? &found : NULL,
                             &img->id);
}

void
image_close (struct image *img)
{
  if (img->elf != NULL)
    elf_end (img->elf);
  free (img->buf);
  if (img->fd >= 0)
    close (img->fd);
  memset (img, 0, sizeof *img);
  img->fd = -1;
}

unsigned char *
image_bits (struct image *img)
{
  return img->buf + img->region.offset + PBITMAP_HEADER_SIZE;
}


/* The header's entry and mark fields hold the distance from the field to
   what they point at, which did not move with the note: when the stale
   program header still says where the note was (it is well placed), the
   fields move by the distance the note moved.  Otherwise they are left:
   the runtime never reads entry, and a wrong mark costs at most a second
   prefetch of a library (doc/format.md).  */
static void
links_move (struct image *img)
{
  struct region *r = &img->region;
  if (!r->phdr_placed)
    return;
  int64_t moved = (int64_t) (r->vaddr - r->phdr_vaddr);
  unsigned char *hdr = img->buf + r->offset;
  int64_t *field[] = { &r->hdr.entry, &r->hdr.mark };
  size_t at[] = { PBITMAP_OFF_ENTRY, PBITMAP_OFF_MARK };
  for (size_t i = 0; i < 2; i++)
    if (*field[i] != 0)
      {
        *field[i] -= moved;
        put_u64 (hdr + at[i], (uint64_t) *field[i], img->msb);
      }
}

int
image_resync (struct image *img)
{
  struct region *r = &img->region;
  GElf_Ehdr ehdr;
  if (gelf_getehdr (img->elf, &ehdr) == NULL)
    {
      error (0, 0, "error: %s: %s", img->path, elf_errmsg (-1));
      return -1;
    }
  uint64_t at;
  size_t len;
  if (region_phdr_at (img->elf, img->size, r, &at, &len) != 0
      || region_phdr_encode (img->elf, img->buf + at, r) != 0)
    {
      error (0, 0, "error: %s: program header %zu cannot be rewritten "
             "(entry size %u)", img->path, r->phdr_index, ehdr.e_phentsize);
      return -1;
    }
  links_move (img);
  r->stale = 0;
  return 0;
}

/* objcopy --only-keep-debug and eu-strip -f keep every section header but
   make the sections' contents SHT_NOBITS, the notes excepted; a program
   never has code without contents.  */
int
image_is_debug_file (Elf *elf)
{
  Elf_Scn *scn = NULL;
  while ((scn = elf_nextscn (elf, scn)) != NULL)
    {
      GElf_Shdr sh;
      if (gelf_getshdr (scn, &sh) != NULL && sh.sh_type == SHT_NOBITS
          && (sh.sh_flags & SHF_ALLOC) && (sh.sh_flags & SHF_EXECINSTR)
          && sh.sh_size > 0)
        return 1;
    }
  return 0;
}

void
image_store_header (struct image *img)
{
  unsigned char *hdr = img->buf + img->region.offset;
  put_u64 (hdr + PBITMAP_OFF_PAGES_SET, img->region.hdr.pages_set, img->msb);
  put_u64 (hdr + PBITMAP_OFF_RUNS, img->region.hdr.runs, img->msb);
  put_u32 (hdr + PBITMAP_OFF_FLAGS, img->region.hdr.flags, img->msb);
  put_u32 (hdr + PBITMAP_OFF_MAX_GAP, img->region.hdr.max_gap, img->msb);
  if (img->region.hdr.version >= 2)
    put_u32 (hdr + PBITMAP_OFF_ORDER_LEN, img->region.hdr.order_len,
             img->msb);
}

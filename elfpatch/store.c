/* store.c: bitmaps of objects that are not rewritten (--store, --gc).
 *
 * A program the package manager installed must not be changed: an
 * upgrade replaces its files and dpkg --verify flags a changed one.  So
 * its bitmaps go to a store, a directory with one entry per object named
 * after the object's identity (include/pbitmap-store.h, doc/format.md
 * section 5).  An entry holds a region laid out as in the file, so every
 * step that works on a region works on it: --fill --store fills it from
 * the traces as it fills a file (fill.c, --age included), --clear --store
 * removes it, --show --store prints it, and the launcher (run.c) and the
 * audit module (audit/) read it for objects that have no region.
 *
 * The store is the directory --store=DIR names, else PBITMAP_STORE, else
 * /var/cache/pbitmap for root and $XDG_CACHE_HOME/pbitmap (or
 * ~/.cache/pbitmap) for everyone else.  PBITMAP_STORE is read with
 * secure_getenv, ignored under AT_SECURE like every PBITMAP variable.
 *
 * Writes are atomic: an entry is written to ".NAME.XXXXXX" in the store,
 * synced and renamed over NAME, so a reader sees the old entry or the new
 * one, never a mix.  Fills of one store are serialized by an exclusive
 * flock on DIR/.lock held from the first read of an entry to the last
 * rename, so that two concurrent fills of one object (with --age, each
 * ages in what the other wrote) lose nothing.  Readers take no lock.
 *
 * An entry is never used for another build: a reader looks it up by the
 * object's identity and compares the identity stored in it, and a fill
 * stores only objects whose file still has the identity the trace
 * recorded.  A bad entry (truncated, hostile) is ignored by readers and
 * reported by --show; --gc drops it, and entries whose object is gone or
 * is now another build.
 */

#include <dirent.h>
#include <errno.h>
#include <error.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elfpatch.h"
#include "pbitmap-store.h"

/* --store=DIR, null for the default.  */
const char *elfpatch_store_dir;

const char *
store_dir (char *buf, size_t size)
{
  const char *env = secure_getenv ("PBITMAP_STORE");
  if (elfpatch_store_dir != NULL)
    return elfpatch_store_dir;
  if (env != NULL && *env != '\0')
    return env;
  if (geteuid () == 0)
    return PBITMAP_STORE_SYSTEM_DIR;
  const char *xdg = getenv ("XDG_CACHE_HOME"), *home = getenv ("HOME");
  if (xdg != NULL && xdg[0] == '/')
    snprintf (buf, size, "%s/pbitmap", xdg);
  else if (home != NULL && *home != '\0')
    snprintf (buf, size, "%s/.cache/pbitmap", home);
  else
    return NULL;
  return buf;
}

/* The name of ID's entry into NAME (PBITMAP_STORE_NAME_MAX bytes).  */
static void
entry_name (const struct identity *id, char *name)
{
  if (id->build_id_len > 0)
    pbitmap_store_name_build_id (name, id->build_id,
                                 (unsigned) id->build_id_len);
  else
    snprintf (name, PBITMAP_STORE_NAME_MAX, "size-%" PRIu64 "-%016" PRIx64
              "%s", id->size, id->fnv1a64, PBITMAP_STORE_SUFFIX);
}

void
stored_free (struct stored *s)
{
  free (s->entry);
  memset (s, 0, sizeof *s);
}

static const char *
defect_text (enum pbitmap_store_defect d)
{
  switch (d)
    {
    case PBITMAP_STORE_TRUNCATED: return "truncated";
    case PBITMAP_STORE_BAD_MAGIC: return "not a pbitmap store entry";
    case PBITMAP_STORE_BAD_VERSION: return "unsupported entry version";
    case PBITMAP_STORE_BAD_LAYOUT: return "bad entry layout";
    case PBITMAP_STORE_BAD_REGION: return "bad region header";
    default: return "valid";
    }
}

/* Reads and checks the entry FILE into S.  Returns 0; 1 when there is no
   such file; -1 with WHY.  */
int
stored_read (const char *file, struct stored *s, char *why, size_t whysize)
{
  memset (s, 0, sizeof *s);
  int fd = open (file, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  struct stat st;
  if (fd < 0 && errno == ENOENT)
    return 1;
  if (fd < 0 || fstat (fd, &st) != 0)
    {
      snprintf (why, whysize, "%s", strerror (errno));
      goto fail;
    }
  if (!S_ISREG (st.st_mode) || st.st_size > PBITMAP_STORE_ENTRY_MAX)
    {
      snprintf (why, whysize, "%s", S_ISREG (st.st_mode)
                ? "larger than any entry" : "not a regular file");
      goto fail;
    }
  s->size = (size_t) st.st_size;
  s->entry = malloc (s->size + 1);
  if (s->entry == NULL || read_at (NULL, fd, 0, s->entry, s->size) != 0)
    {
      snprintf (why, whysize, "%s", errno == 0 ? "truncated"
                : strerror (errno));
      goto fail;
    }
  enum pbitmap_store_defect d = pbitmap_store_check (s->entry, s->size);
  if (d != PBITMAP_STORE_OK)
    {
      snprintf (why, whysize, "%s", defect_text (d));
      goto fail;
    }
  const unsigned char *e = s->entry;
  s->id.build_id_len = get_u32 (e + PBITMAP_STORE_OFF_ID_LEN, 0);
  memcpy (s->id.build_id, e + PBITMAP_STORE_HEADER_SIZE, s->id.build_id_len);
  s->object_size = get_u64 (e + PBITMAP_STORE_OFF_OBJECT_SIZE, 0);
  if (s->id.build_id_len == 0)
    {
      s->id.size = s->object_size;
      s->id.fnv1a64 = get_u64 (e + PBITMAP_STORE_OFF_OBJECT_FNV, 0);
    }
  s->path = (const char *) e + PBITMAP_STORE_HEADER_SIZE
            + s->id.build_id_len;
  s->region_offset = get_u32 (e + PBITMAP_STORE_OFF_REGION_OFFSET, 0);
  s->region_size = s->size - s->region_offset;
  region_header_decode (e + s->region_offset, 0, &s->hdr);
  close (fd);
  return 0;

fail:
  if (fd >= 0)
    close (fd);
  stored_free (s);
  return -1;
}

int
stored_find (const char *dir, const struct identity *id, struct stored *s,
             char *file, size_t filesize, char *why, size_t whysize)
{
  char name[PBITMAP_STORE_NAME_MAX];
  entry_name (id, name);
  snprintf (file, filesize, "%s/%s", dir, name);
  int rc = stored_read (file, s, why, whysize);
  if (rc == 0 && !identity_equal (&s->id, id))
    {
      snprintf (why, whysize, "holds another build's bitmap");
      stored_free (s);
      return -1;
    }
  return rc;
}

/* The stores a reader looks in: the one in effect and, for a user
   who did not name one, the system's after the user's own.  */
static size_t
reader_dirs (char *buf, size_t size, const char *dirs[2])
{
  const char *env = secure_getenv ("PBITMAP_STORE");
  size_t n = 0;
  if ((dirs[0] = store_dir (buf, size)) != NULL)
    n++;
  if (elfpatch_store_dir == NULL && (env == NULL || *env == '\0')
      && geteuid () != 0)
    dirs[n++] = PBITMAP_STORE_SYSTEM_DIR;
  return n;
}

int
store_bitmap (const char *path, int fd, Elf *elf, uint64_t file_size,
              struct pbitmap_header *hdr, unsigned char **bits, char *from,
              size_t fromsize)
{
  char buf[PATH_MAX], why[256];
  const char *dirs[2];
  size_t n_dirs = reader_dirs (buf, sizeof buf, dirs);
  struct identity id;
  struct stored s;
  int quiet = elfpatch_quiet, rc = 1;
  if (n_dirs == 0)
    return -1;
  /* A file that cannot be hashed is one without a bitmap here.  */
  elfpatch_quiet = 1;
  int idrc = identity_compute (path, elf, NULL, fd, file_size, &id);
  elfpatch_quiet = quiet;
  if (idrc != 0)
    return -1;
  for (size_t i = 0; i < n_dirs && rc > 0; i++)
    {
      rc = stored_find (dirs[i], &id, &s, from, fromsize, why, sizeof why);
      if (rc < 0 && elfpatch_verbose > 0)
        elfpatch_warn ("%s: %s; not prefetched", from, why);
    }
  if (rc != 0)
    return -1;
  if (!(s.hdr.flags & PBITMAP_F_FILLED) || s.hdr.pages_set == 0
      || s.object_size != file_size)
    {
      stored_free (&s);
      return -1;
    }
  *hdr = s.hdr;
  /* The bits move to the front of the entry's buffer, which the caller
     frees.  */
  memmove (s.entry, s.entry + s.region_offset + PBITMAP_HEADER_SIZE,
           s.region_size - PBITMAP_HEADER_SIZE);
  *bits = s.entry;
  return 0;
}

/* ---- writing ------------------------------------------------------------- */

/* Writes the entry of IMG (its region in IMG->buf) as FILE in DIR.  */
static int
entry_write (const char *dir, const char *file, const struct image *img,
             const char *object)
{
  size_t path_len = strlen (object);
  size_t region_offset = (PBITMAP_STORE_HEADER_SIZE + img->id.build_id_len
                          + path_len + 1 + 7) & ~(size_t) 7;
  size_t size = region_offset + (size_t) img->region.size;
  unsigned char *e = calloc (size, 1);
  char *tmp = NULL, *tmpdir = NULL;
  int fd = -1, rc = -1;
  if (e == NULL)
    {
      error (0, errno, "error: %s", file);
      goto out;
    }
  memcpy (e, PBITMAP_STORE_MAGIC, 8);
  put_u32 (e + PBITMAP_STORE_OFF_VERSION, PBITMAP_STORE_VERSION, 0);
  put_u32 (e + PBITMAP_STORE_OFF_REGION_OFFSET, (uint32_t) region_offset, 0);
  put_u32 (e + PBITMAP_STORE_OFF_ID_LEN, (uint32_t) img->id.build_id_len, 0);
  put_u32 (e + PBITMAP_STORE_OFF_PATH_LEN, (uint32_t) path_len, 0);
  put_u64 (e + PBITMAP_STORE_OFF_OBJECT_SIZE, img->size, 0);
  put_u64 (e + PBITMAP_STORE_OFF_OBJECT_FNV,
           img->id.build_id_len ? 0 : img->id.fnv1a64, 0);
  put_u64 (e + PBITMAP_STORE_OFF_REGION_SIZE, img->region.size, 0);
  memcpy (e + PBITMAP_STORE_HEADER_SIZE, img->id.build_id,
          img->id.build_id_len);
  memcpy (e + PBITMAP_STORE_HEADER_SIZE + img->id.build_id_len, object,
          path_len);
  memcpy (e + region_offset, img->buf, (size_t) img->region.size);

  fd = temp_beside (file, file, &tmp, &tmpdir);
  if (fd < 0)
    goto out;
  if (write (fd, e, size) != (ssize_t) size || fchmod (fd, 0644) != 0
      || fsync (fd) != 0)
    {
      error (0, errno, "error: %s: cannot write %s", file, tmp);
      goto out;
    }
  if (rename (tmp, file) != 0)
    {
      error (0, errno, "error: %s: cannot rename %s over it", file, tmp);
      goto out;
    }
  sync_directory (dir, file);
  rc = 0;

out:
  if (fd >= 0)
    close (fd);
  if (rc != 0 && tmp != NULL)
    unlink (tmp);
  free (tmp);
  free (tmpdir);
  free (e);
  return rc;
}

/* A new, empty region for an object of SIZE bytes into IMG.  */
static int
region_new (struct image *img, uint64_t size)
{
  uint64_t capacity = (size + PBITMAP_PAGE_SIZE - 1) >> PBITMAP_PAGE_SHIFT;
  uint64_t rsize = pbitmap_region_size (capacity);
  unsigned char *r = calloc ((size_t) rsize, 1);
  if (r == NULL)
    return -1;
  put_u32 (r + PBITMAP_OFF_NAMESZ, PBITMAP_NOTE_NAMESZ, 0);
  put_u32 (r + PBITMAP_OFF_DESCSZ, (uint32_t) (rsize - 20), 0);
  put_u32 (r + PBITMAP_OFF_TYPE, PBITMAP_NT_BITMAP, 0);
  memcpy (r + PBITMAP_OFF_NAME, PBITMAP_NOTE_NAME, PBITMAP_NOTE_NAMESZ);
  put_u32 (r + PBITMAP_OFF_MAGIC, PBITMAP_MAGIC, 0);
  r[PBITMAP_OFF_VERSION] = PBITMAP_VERSION;
  r[PBITMAP_OFF_HEADER_SIZE] = PBITMAP_HEADER_SIZE;
  put_u32 (r + PBITMAP_OFF_PAGE_SHIFT, PBITMAP_PAGE_SHIFT, 0);
  put_u64 (r + PBITMAP_OFF_CAPACITY, capacity, 0);
  put_u32 (r + PBITMAP_OFF_ORDER_SIZE, (uint32_t) pbitmap_order_blocks (capacity),
           0);
  img->buf = r;
  img->region.size = rsize;
  region_header_decode (r, 0, &img->region.hdr);
  return 0;
}

/* The object of an entry as an image whose buffer is the region alone:
   what fill_image changes.  The region is the stored one when FILE holds
   a valid entry of the same build and capacity (its bitmap moved into a
   region of the current version when it is older), else a new one.  */
static int
entry_image (const char *file, int fd, uint64_t size,
             const struct identity *id, const char *object, struct image *img)
{
  struct stored s;
  char why[256];
  memset (img, 0, sizeof *img);
  img->path = object;
  img->fd = fd;
  img->size = (size_t) size;
  img->id = *id;
  int rc = stored_read (file, &s, why, sizeof why);
  int same = rc == 0 && identity_equal (&s.id, id)
             && s.hdr.capacity == (size + PBITMAP_PAGE_SIZE - 1)
                                  >> PBITMAP_PAGE_SHIFT;
  if (same && s.hdr.version < PBITMAP_VERSION)
    {
      /* An entry of an older region version: its bitmap and what the
         header says of it go into a new region, which has room for a
         read order (--age ages them in).  */
      const unsigned char *old = s.entry + s.region_offset;
      rc = region_new (img, size);
      if (rc == 0)
        {
          memcpy (img->buf + PBITMAP_OFF_PAGES_SET,
                  old + PBITMAP_OFF_PAGES_SET,
                  PBITMAP_OFF_ENTRY - PBITMAP_OFF_PAGES_SET);
          memcpy (img->buf + PBITMAP_HEADER_SIZE, old + PBITMAP_HEADER_SIZE,
                  (size_t) pbitmap_bits_size (s.hdr.capacity));
          region_header_decode (img->buf, 0, &img->region.hdr);
        }
      stored_free (&s);
      return rc;
    }
  if (same)
    {
      img->buf = malloc (s.region_size);
      if (img->buf != NULL)
        {
          memcpy (img->buf, s.entry + s.region_offset, s.region_size);
          img->region.size = s.region_size;
          img->region.hdr = s.hdr;
        }
      stored_free (&s);
      return img->buf != NULL ? 0 : -1;
    }
  if (rc == 0)
    stored_free (&s);
  else if (rc < 0)
    elfpatch_note ("%s: %s; replaced", file, why);
  return region_new (img, size);
}

/* Opens OBJECT and computes its identity: 1 when it is an ELF file (FD
   open, *SIZE its size), 0 when it is missing or not ELF, -1 after a
   message.  */
static int
object_identity (const char *object, int *fd, uint64_t *size,
                 struct identity *id)
{
  struct stat st;
  *fd = open (object, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (*fd < 0 || fstat (*fd, &st) != 0 || !S_ISREG (st.st_mode))
    goto not_elf;
  elf_version (EV_CURRENT);
  Elf *elf = elf_begin (*fd, ELF_C_READ, NULL);
  if (elf == NULL || elf_kind (elf) != ELF_K_ELF)
    {
      if (elf != NULL)
        elf_end (elf);
      goto not_elf;
    }
  *size = (uint64_t) st.st_size;
  int rc = identity_compute (object, elf, NULL, *fd, *size, id);
  elf_end (elf);
  return rc == 0 ? 1 : -1;

not_elf:
  if (*fd >= 0)
    close (*fd);
  *fd = -1;
  return 0;
}

/* One object the traces name: its identity and path, and which traces
   have it.  */
struct wanted
{
  struct identity id;
  const char *path;
  char **traces;
  size_t n_traces;
};

/* Fills the entry of W in DIR.  Returns 0 or -1 after a message.  */
static int
store_object (const char *dir, const struct wanted *w,
              const struct fill_policy *policy, const struct gap_choice *gap)
{
  int fd;
  uint64_t size;
  struct identity now;
  int rc = object_identity (w->path, &fd, &size, &now);
  if (rc <= 0)
    {
      if (rc == 0)
        elfpatch_note ("%s: missing or not ELF; not stored", w->path);
      return rc;
    }
  if (!identity_equal (&now, &w->id))
    {
      elfpatch_warn ("%s: another build than the traces recorded; not "
                     "stored", w->path);
      close (fd);
      return 0;
    }
  char name[PBITMAP_STORE_NAME_MAX], file[PATH_MAX + PBITMAP_STORE_NAME_MAX];
  entry_name (&now, name);
  snprintf (file, sizeof file, "%s/%s", dir, name);
  struct image img;
  rc = -1;
  if (entry_image (file, fd, size, &now, w->path, &img) != 0)
    {
      error (0, errno, "error: %s", file);
      close (fd);
      return -1;
    }
  if (fill_image (&img, w->traces, w->n_traces, policy, gap) >= 0
      && entry_write (dir, file, &img, w->path) == 0)
    {
      elfpatch_note ("%s: %" PRIu64 " pages set in %" PRIu64 " runs, stored "
                     "as %s", w->path, img.region.hdr.pages_set,
                     img.region.hdr.runs, file);
      rc = 0;
    }
  image_close (&img);
  return rc;
}

/* Adds the objects of trace PATH (read into T) to *W.  Returns 0 or -1
   after a message.  */
static int
collect_objects (char *path, struct wanted **w, size_t *n, size_t *alloc,
                 struct trace *t)
{
  if (trace_read (path, t) != 0)
    return -1;
  errno = ENOMEM;
  for (size_t i = 0; i < t->n_blocks; i++)
    {
      const struct trace_block *b = &t->blocks[i];
      size_t k = 0;
      while (k < *n && !identity_equal (&(*w)[k].id, &b->id))
        k++;
      if (k == *n)
        {
          if (array_reserve ((void **) w, alloc, *n, sizeof **w) != 0)
            goto nomem;
          memset (&(*w)[k], 0, sizeof **w);
          (*w)[k].id = b->id;
          (*w)[k].path = b->path;
          (*n)++;
        }
      struct wanted *o = &(*w)[k];
      if (o->n_traces == 0 || o->traces[o->n_traces - 1] != path)
        {
          char **more = realloc (o->traces, (o->n_traces + 1)
                                            * sizeof *o->traces);
          if (more == NULL)
            goto nomem;
          o->traces = more;
          o->traces[o->n_traces++] = path;
        }
    }
  return 0;

nomem:
  error (0, errno, "error: %s", path);
  return -1;
}

/* Creates DIR if need be and takes the store's lock: its descriptor, or
   -1 after a message.  */
static int
store_lock (const char *dir)
{
  char lock[PATH_MAX];
  if (mkdir (dir, 0755) != 0 && errno != EEXIST)
    {
      error (0, errno, "error: %s", dir);
      return -1;
    }
  snprintf (lock, sizeof lock, "%s/.lock", dir);
  int fd = open (lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  int rc = -1;
  if (fd >= 0)
    while ((rc = flock (fd, LOCK_EX)) != 0 && errno == EINTR)
      ;
  if (rc != 0)
    {
      error (0, errno, "error: %s", lock);
      if (fd >= 0)
        close (fd);
      return -1;
    }
  return fd;
}

int
store_fill_command (char **traces, size_t n_traces,
                    const struct fill_policy *policy,
                    const struct gap_choice *gap)
{
  char buf[PATH_MAX];
  const char *dir = store_dir (buf, sizeof buf);
  struct trace *t = calloc (n_traces, sizeof *t);
  struct wanted *w = NULL;
  size_t n = 0, alloc = 0;
  int status = 1, lock = -1;
  if (dir == NULL)
    {
      error (0, 0, "error: no store: give --store=DIR, PBITMAP_STORE or HOME");
      goto out;
    }
  if (t == NULL)
    goto out;
  for (size_t i = 0; i < n_traces; i++)
    if (collect_objects (traces[i], &w, &n, &alloc, &t[i]) != 0)
      goto out;
  if ((lock = store_lock (dir)) < 0)
    goto out;
  status = 0;
  for (size_t k = 0; k < n; k++)
    if (store_object (dir, &w[k], policy, gap) != 0)
      status = 1;

out:
  if (lock >= 0)
    close (lock);
  for (size_t k = 0; k < n; k++)
    free (w[k].traces);
  free (w);
  for (size_t i = 0; t != NULL && i < n_traces; i++)
    trace_free (&t[i]);
  free (t);
  return status;
}

/* ---- show, clear, gc ------------------------------------------------------ */

/* Whether the object of S is still there as the build S was filled for:
   "present", "missing" or "another build".  */
static const char *
object_state (const struct stored *s)
{
  int fd;
  uint64_t size;
  struct identity now;
  int quiet = elfpatch_quiet;
  elfpatch_quiet = 1;
  int rc = object_identity (s->path, &fd, &size, &now);
  elfpatch_quiet = quiet;
  if (rc <= 0)
    return "missing";
  close (fd);
  return identity_equal (&now, &s->id) ? "present" : "another build";
}

static void
show_entry (const char *file, const struct stored *s)
{
  char id[IDENTITY_TEXT_MAX];
  identity_format (&s->id, id, sizeof id);
  const unsigned char *bits = s->entry + s->region_offset
                              + PBITMAP_HEADER_SIZE;
  uint64_t set = bits_count (bits, 0, s->hdr.capacity);
  printf ("%s:\n", file);
  printf ("  object:    %s (%s)\n", s->path, object_state (s));
  printf ("  identity:  %s\n", id);
  printf ("  capacity:  %" PRIu64 " pages\n", s->hdr.capacity);
  printf ("  filled:    %s\n", s->hdr.flags & PBITMAP_F_FILLED ? "yes" : "no");
  printf ("  pages set: %" PRIu64, set);
  if (set != s->hdr.pages_set)
    printf (" (the header says %" PRIu64 ")", s->hdr.pages_set);
  printf ("\n  runs:      %" PRIu64 "\n", bits_runs (bits, s->hdr.capacity));
  printf ("  max gap:   %" PRIu32 " pages%s\n", s->hdr.max_gap,
          s->hdr.flags & PBITMAP_F_GAP_AUTO
          ? " where the device cannot be told; the reader chooses" : "");
  printf ("  order:     ");
  show_read_order (&s->hdr, s->entry + s->region_offset
                            + pbitmap_order_offset (s->hdr.capacity), 0);
  printf ("\n");
}

/* The entry names in DIR, sorted; their number, or -1 after a message.  */
static long
list_entries (const char *dir, char ***names)
{
  struct dirent **list;
  int n = scandir (dir, &list, NULL, alphasort);
  *names = NULL;
  if (n < 0)
    {
      error (0, errno, "error: %s", dir);
      return -1;
    }
  char **out = calloc ((size_t) n + 1, sizeof *out);
  long m = 0;
  size_t slen = strlen (PBITMAP_STORE_SUFFIX);
  for (int i = 0; i < n; i++)
    {
      const char *d = list[i]->d_name;
      size_t len = strlen (d);
      if (out != NULL && d[0] != '.' && len > slen
          && strcmp (d + len - slen, PBITMAP_STORE_SUFFIX) == 0
          && asprintf (&out[m], "%s/%s", dir, d) >= 0)
        m++;
      free (list[i]);
    }
  free (list);
  *names = out;
  return out != NULL ? m : -1;
}

static void
names_free (char **names, long n)
{
  for (long i = 0; i < n; i++)
    free (names[i]);
  free (names);
}

/* The entry file of OBJECT's build into FILE; S read when VALID.
   Returns 0, or -1 after a message.  */
static int
object_entry (const char *dir, const char *object, char *file,
              size_t filesize, struct stored *s)
{
  int fd;
  uint64_t size;
  struct identity id;
  char why[256];
  int rc = object_identity (object, &fd, &size, &id);
  if (rc <= 0)
    {
      if (rc == 0)
        error (0, errno, "error: %s%s", object, errno ? ""
               : ": not an ELF file");
      return -1;
    }
  close (fd);
  rc = stored_find (dir, &id, s, file, filesize, why, sizeof why);
  if (rc == 0)
    return 0;
  if (rc > 0)
    error (0, 0, "error: %s: no stored bitmap for this build in %s", object,
           dir);
  else
    error (0, 0, "error: %s: %s", file, why);
  return -1;
}

int
store_show_command (char **objects, size_t n_objects)
{
  char buf[PATH_MAX], file[PATH_MAX + PBITMAP_STORE_NAME_MAX], why[256];
  const char *dir = store_dir (buf, sizeof buf);
  struct stored s;
  int status = 0;
  if (dir == NULL)
    {
      error (0, 0, "error: no store: give --store=DIR, PBITMAP_STORE or HOME");
      return 1;
    }
  for (size_t i = 0; i < n_objects; i++)
    if (object_entry (dir, objects[i], file, sizeof file, &s) != 0)
      status = 1;
    else
      {
        show_entry (file, &s);
        stored_free (&s);
      }
  if (n_objects > 0)
    return status;

  char **names;
  long n = list_entries (dir, &names);
  for (long i = 0; i < n; i++)
    if (stored_read (names[i], &s, why, sizeof why) != 0)
      {
        elfpatch_warn ("%s: %s", names[i], why);
        status = 1;
      }
    else
      {
        show_entry (names[i], &s);
        stored_free (&s);
      }
  names_free (names, n);
  return n < 0 ? 1 : status;
}

int
store_clear_command (char **objects, size_t n_objects)
{
  char buf[PATH_MAX], file[PATH_MAX + PBITMAP_STORE_NAME_MAX];
  const char *dir = store_dir (buf, sizeof buf);
  struct stored s;
  int status = 0;
  for (size_t i = 0; i < n_objects; i++)
    if (dir == NULL || object_entry (dir, objects[i], file, sizeof file, &s))
      status = 1;
    else
      {
        stored_free (&s);
        if (unlink (file) != 0)
          {
            error (0, errno, "error: %s", file);
            status = 1;
          }
        else
          elfpatch_note ("%s: removed %s", objects[i], file);
      }
  return status;
}

int
store_gc_command (void)
{
  char buf[PATH_MAX], why[256];
  const char *dir = store_dir (buf, sizeof buf);
  if (dir == NULL)
    {
      error (0, 0, "error: no store: give --store=DIR, PBITMAP_STORE or HOME");
      return 1;
    }
  int lock = store_lock (dir);
  if (lock < 0)
    return 1;
  char **names;
  long n = list_entries (dir, &names);
  int status = n < 0;
  for (long i = 0; i < n; i++)
    {
      struct stored s;
      const char *state;
      if (stored_read (names[i], &s, why, sizeof why) != 0)
        state = why;
      else if (strcmp (state = object_state (&s), "present") == 0)
        {
          stored_free (&s);
          continue;
        }
      if (unlink (names[i]) != 0)
        {
          error (0, errno, "error: %s", names[i]);
          status = 1;
        }
      else
        elfpatch_note ("%s: dropped (%s%s%s)", names[i],
                       s.path != NULL ? s.path : "", s.path != NULL ? ": " : "",
                       state);
      stored_free (&s);
    }
  names_free (names, n);
  close (lock);
  return status;
}

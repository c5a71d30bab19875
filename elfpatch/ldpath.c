/* ldpath.c: find a shared library the way the dynamic linker does, for
 * the launcher (run.c), which prefetches a program's libraries before the
 * program starts.
 *
 * glibc's ld.so looks for a DT_NEEDED name without a slash in this order,
 * taking the first file that opens and is an ELF object of the program's
 * class and machine:
 *
 *   1. the DT_RPATH of the object that needs the library, then of the
 *      object that loaded that one, and so on up to the executable; but
 *      only when the needing object has no DT_RUNPATH (an object with a
 *      DT_RUNPATH has its own DT_RPATH ignored);
 *   2. LD_LIBRARY_PATH (separated by ':' or ';');
 *   3. the DT_RUNPATH of the needing object;
 *   4. /etc/ld.so.cache, unless the needing object has DF_1_NODEFLIB;
 *   5. the default directories, with the same exception.
 *
 * A name with a slash is a path, used as it is.  In the path lists an
 * empty entry is the current directory, $ORIGIN and ${ORIGIN} stand for
 * the directory of the object whose list it is (of the executable, for
 * LD_LIBRARY_PATH); an entry with another dynamic string token ($LIB,
 * $PLATFORM), whose value is the dynamic linker's own, is skipped.  The
 * hwcaps subdirectories ld.so also tries (glibc-hwcaps/x86-64-v3/ ...)
 * are not: a library found only there is not prefetched, which costs
 * speed, never correctness.
 *
 * /etc/ld.so.cache is read in the "glibc-ld.so.cache1.1" format (glibc
 * 2.32 and later write only it; older ones put it after an
 * "ld.so-1.7.0" table): a 48-byte header (magic "glibc-ld.so.cache",
 * version "1.1", u32 nlibs, u32 len_strings, u8 flags, 3 padding, u32
 * extension_offset, 3 unused u32), then nlibs 24-byte entries (i32 flags,
 * u32 key, u32 value, u32 osversion, u64 hwcap), key and value being
 * offsets of the library's name and path from the header's start, in the
 * host's byte order.  Entries of another type than ELF libc6 ((flags &
 * 0xff) != 3) or for a hwcaps subdirectory (hwcap != 0) are passed over;
 * the machine is checked on the file itself.  The cache is mapped once.
 */

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elfpatch.h"

#define LD_CACHE_PATH "/etc/ld.so.cache"
#define LD_CACHE_MAGIC "glibc-ld.so.cache1.1"
#define LD_CACHE_OLD_MAGIC "ld.so-1.7.0"
#define LD_CACHE_HEADER 48
#define LD_CACHE_ENTRY 24
#define LD_CACHE_OLD_HEADER 16
#define LD_CACHE_OLD_ENTRY 12
#define LD_CACHE_FLAG_TYPE_MASK 0xff
#define LD_CACHE_FLAG_ELF_LIBC6 3

static const char *const default_dirs[] =
{
  "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/lib",
  "/usr/lib"
};

/* The mapped cache: the new-format header at NEW, SIZE bytes from it.  */
static struct
{
  int loaded;
  const unsigned char *map;
  size_t map_size;
  const unsigned char *new;
  size_t size;
  uint32_t nlibs;
} cache;

/* Where the new-format table starts in a cache of SIZE bytes at MAP.  */
static size_t
cache_new_offset (const unsigned char *map, size_t size)
{
  if (size < LD_CACHE_OLD_HEADER
      || memcmp (map, LD_CACHE_OLD_MAGIC, strlen (LD_CACHE_OLD_MAGIC)) != 0)
    return 0;
  uint32_t nold;
  memcpy (&nold, map + 12, sizeof nold);
  uint64_t end = LD_CACHE_OLD_HEADER + (uint64_t) nold * LD_CACHE_OLD_ENTRY;
  return (size_t) ((end + 7) & ~(uint64_t) 7);
}

static void
cache_load (void)
{
  cache.loaded = 1;
  int fd = open (LD_CACHE_PATH, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0)
    return;
  if (fstat (fd, &st) == 0 && st.st_size >= LD_CACHE_HEADER)
    {
      void *map = mmap (NULL, (size_t) st.st_size, PROT_READ, MAP_PRIVATE,
                        fd, 0);
      if (map != MAP_FAILED)
        {
          cache.map = map;
          cache.map_size = (size_t) st.st_size;
        }
    }
  close (fd);
  if (cache.map == NULL)
    return;

  size_t at = cache_new_offset (cache.map, cache.map_size);
  if (at > cache.map_size || cache.map_size - at < LD_CACHE_HEADER
      || memcmp (cache.map + at, LD_CACHE_MAGIC, strlen (LD_CACHE_MAGIC)) != 0)
    return;
  cache.new = cache.map + at;
  cache.size = cache.map_size - at;
  memcpy (&cache.nlibs, cache.new + 20, sizeof cache.nlibs);
  if (cache.nlibs > (cache.size - LD_CACHE_HEADER) / LD_CACHE_ENTRY)
    cache.new = NULL;
}

/* The NUL-terminated string at OFFSET of the cache, or null.  */
static const char *
cache_string (uint32_t offset)
{
  if (offset >= cache.size
      || memchr (cache.new + offset, '\0', cache.size - offset) == NULL)
    return NULL;
  return (const char *) cache.new + offset;
}

static int
search_cache (const char *name, ld_try_fn try, void *arg, char **found)
{
  if (!cache.loaded)
    cache_load ();
  if (cache.new == NULL)
    return 0;
  for (uint32_t i = 0; i < cache.nlibs; i++)
    {
      const unsigned char *e = cache.new + LD_CACHE_HEADER
                               + (size_t) i * LD_CACHE_ENTRY;
      int32_t flags;
      uint32_t key, value;
      uint64_t hwcap;
      memcpy (&flags, e, 4);
      memcpy (&key, e + 4, 4);
      memcpy (&value, e + 8, 4);
      memcpy (&hwcap, e + 16, 8);
      if ((flags & LD_CACHE_FLAG_TYPE_MASK) != LD_CACHE_FLAG_ELF_LIBC6
          || hwcap != 0)
        continue;
      const char *k = cache_string (key), *path = cache_string (value);
      if (k == NULL || path == NULL || strcmp (k, name) != 0)
        continue;
      if (try (path, arg))
        return (*found = strdup (path)) != NULL;
    }
  return 0;
}

/* Tries DIR/NAME, DIR being LEN bytes of a path list with $ORIGIN
   standing for ORIGIN.  */
static int
try_dir (const char *dir, size_t len, const char *origin, const char *name,
         ld_try_fn try, void *arg, char **found)
{
  /* Each $ORIGIN takes at least 7 bytes of DIR.  */
  size_t size = len + (len / 7 + 1) * strlen (origin ? origin : "")
                + strlen (name) + 3;
  char *path = malloc (size), *out = path;
  if (path == NULL)
    return 0;
  if (len == 0)
    *out++ = '.';
  for (size_t i = 0; i < len;)
    {
      size_t tok = 0;
      if (dir[i] == '$' && len - i >= 7 && memcmp (dir + i + 1, "ORIGIN", 6) == 0)
        tok = 7;
      else if (dir[i] == '$' && len - i >= 9
               && memcmp (dir + i + 1, "{ORIGIN}", 8) == 0)
        tok = 9;
      else if (dir[i] == '$')
        {
          free (path);          /* $LIB, $PLATFORM: ld.so's own values */
          return 0;
        }
      if (tok != 0 && origin == NULL)
        {
          free (path);
          return 0;
        }
      if (tok != 0)
        {
          out = stpcpy (out, origin);
          i += tok;
        }
      else
        *out++ = dir[i++];
    }
  *out++ = '/';
  strcpy (out, name);
  if (try (path, arg))
    {
      *found = path;
      return 1;
    }
  free (path);
  return 0;
}

/* Tries NAME in each directory of LIST (separated by any of SEPS).  */
static int
try_list (const char *list, const char *seps, const char *origin,
          const char *name, ld_try_fn try, void *arg, char **found)
{
  if (list == NULL)
    return 0;
  for (const char *p = list;; )
    {
      size_t len = strcspn (p, seps);
      if (try_dir (p, len, origin, name, try, arg, found))
        return 1;
      if (p[len] == '\0')
        return 0;
      p += len + 1;
    }
}

int
ld_search (const char *name, const struct ld_object *needer, ld_try_fn try,
           void *arg, char **found)
{
  *found = NULL;
  if (strchr (name, '/') != NULL)
    return try (name, arg) && (*found = strdup (name)) != NULL;

  const struct ld_object *exe = needer;
  while (exe->loader != NULL)
    exe = exe->loader;

  if (needer->runpath == NULL)
    for (const struct ld_object *l = needer; l != NULL; l = l->loader)
      if (try_list (l->rpath, ":", l->origin, name, try, arg, found))
        return 1;
  if (try_list (getenv ("LD_LIBRARY_PATH"), ":;", exe->origin, name, try,
                arg, found)
      || try_list (needer->runpath, ":", needer->origin, name, try, arg,
                   found))
    return 1;
  if (needer->nodeflib)
    return 0;
  if (search_cache (name, try, arg, found))
    return 1;
  for (size_t i = 0; i < sizeof default_dirs / sizeof default_dirs[0]; i++)
    if (try_dir (default_dirs[i], strlen (default_dirs[i]), NULL, name, try,
                 arg, found))
      return 1;
  return 0;
}

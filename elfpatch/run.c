/* run.c: the launcher, elfpatch --run PROG [ARG...].
 *
 * The runtime linked into a program prefetches its bitmap as early as the
 * program itself can run code, but by then exec, the dynamic linker and
 * the C library's start-up have already faulted in pages one by one.  The
 * launcher starts earlier: it reads the bitmaps of PROG and of the shared
 * libraries PROG will load, asks the kernel to read the marked pages
 * (posix_fadvise POSIX_FADV_WILLNEED, which returns once the reads are
 * queued), and then execs PROG in its own place: same argv, same
 * environment, same pid, so PROG's exit status is the launcher's.
 *
 * The files are found as exec and ld.so find them: PROG through PATH as
 * execvp does; its PT_INTERP; then, breadth first in ld.so's load order,
 * the DT_NEEDED libraries of each object, each searched for as ldpath.c
 * describes.  A name already looked for, or a file already seen (same
 * device and inode), is not taken twice; a library that cannot be found
 * is skipped (with -v, a warning says so).
 *
 * For each file only the headers, a few dynamic strings and the region
 * are read (libelf reads lazily with ELF_C_READ), never the whole file.
 * A file without a PT_PRESENT_BITMAP, or whose region is not filled or
 * sets no page, takes its bitmap from the store (store.c) when it holds a
 * filled entry for the file's build, looked up by build-id (a file
 * without one is hashed whole, as a trace identifies it), as the audit
 * module does.  A file with neither a filled region nor an entry is
 * passed over; one whose region is damaged or cannot
 * be read is passed over with a warning under -v.  Otherwise the
 * set pages that lie in a PT_LOAD's file range are taken in ascending
 * file order and turned into reads exactly as the runtime does it, by the
 * chunker of include/pbitmap-plan.h: reads of at most 512 KiB that start
 * and end at set pages and read through gaps of up to max_gap pages
 * (reading the gap costs less than one more I/O), here only inside the
 * file range of one PT_LOAD, issued in the region's read order when it
 * has one.  max_gap is the one the fill pinned, or, when
 * the fill left it to the reader (PBITMAP_F_GAP_AUTO), the gap of the
 * device the file is on, told as the runtime tells it
 * (include/pbitmap-plan.h, device.c).  With -v one line per file goes
 * to standard error, saying what was done for it:
 *
 *     elfpatch: run: FILE: pages=N runs=R reads=C[ gap=G (CLASS)]
 *     elfpatch: run: FILE: no bitmap (not linked with the pbitmap plugin)
 *     elfpatch: run: FILE: bitmap not filled
 *     elfpatch: run: FILE: empty bitmap
 *
 * where N counts the pages advised, gaps included, R the runs of set
 * pages among them (as --show and PBITMAP_DEBUG count runs), C the
 * reads (chunks; each is one or more posix_fadvise calls,
 * pbitmap_chunk_calls), and the gap and its device class are there when
 * the launcher chose them; and a PROG that is not ELF (a script) gets
 * "not an ELF program; nothing prefetched".  A bitmap from the store
 * ends the first line with " from ENTRY", the entry's file; "no bitmap"
 * then also means that the store has none.
 *
 * Nothing here can keep PROG from running: every problem with a bitmap
 * is ignored, and only a failed exec is an error, with a shell's status:
 * 127 when PROG is not found, 126 when it cannot be executed.
 */

#include <errno.h>
#include <error.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elfpatch.h"
#include "pbitmap-plan.h"

/* Longest dynamic string (a DT_NEEDED name, a path list) read.  */
#define RUN_STRING_MAX 4096u

/* One file of the program: what the library search needs of it, and the
   names of the libraries it needs.  */
struct object
{
  struct ld_object ld;
  char *path;
  char *origin;
  char *rpath;
  char *runpath;
  char **needed;
  size_t n_needed, alloc;
  dev_t dev;
  ino_t ino;
};

struct launch
{
  struct object **objs;
  size_t n_objs, alloc;
  /* The executable's class, byte order and machine: every library must
     match them.  */
  int elfclass, data;
  GElf_Half machine;
  char *interp;
};

/* A file being opened: set by try_candidate when it accepts PATH.  */
struct candidate
{
  struct launch *launch;
  int fd;
  Elf *elf;
  struct stat st;
};

static void run_warn (const char *fmt, ...)
  __attribute__ ((format (printf, 1, 2)));
static void run_say (const char *path, const char *fmt, ...)
  __attribute__ ((format (printf, 2, 3)));

/* Warnings about bitmaps are for -v only: by default the launcher is as
   quiet as the program it starts.  */
static void
run_warn (const char *fmt, ...)
{
  if (elfpatch_verbose <= 0 || elfpatch_quiet)
    return;
  char msg[PATH_MAX + 256];
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (msg, sizeof msg, fmt, ap);
  va_end (ap);
  elfpatch_warn ("%s", msg);
}

/* One -v line on what was done for the file PATH.  */
static void
run_say (const char *path, const char *fmt, ...)
{
  if (elfpatch_verbose <= 0)
    return;
  va_list ap;
  va_start (ap, fmt);
  fprintf (stderr, "%s: run: %s: ", program_invocation_name, path);
  vfprintf (stderr, fmt, ap);
  fputc ('\n', stderr);
  va_end (ap);
}

static int
try_candidate (const char *path, void *arg)
{
  struct candidate *c = arg;
  const struct launch *l = c->launch;
  GElf_Ehdr eh;
  Elf *elf = NULL;
  /* O_NONBLOCK: a FIFO on a search path must not hang the launch.  */
  int fd = open (path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd >= 0 && fstat (fd, &c->st) == 0 && S_ISREG (c->st.st_mode)
      && (elf = elf_begin (fd, ELF_C_READ, NULL)) != NULL
      && elf_kind (elf) == ELF_K_ELF && gelf_getehdr (elf, &eh) != NULL
      && (l->n_objs == 0 || (eh.e_ident[EI_CLASS] == l->elfclass
                             && eh.e_ident[EI_DATA] == l->data
                             && eh.e_machine == l->machine)))
    {
      c->fd = fd;
      c->elf = elf;
      return 1;
    }
  if (elf != NULL)
    elf_end (elf);
  if (fd >= 0)
    close (fd);
  return 0;
}

/* ---- the prefetch of one file ------------------------------------------ */

/* The chunker's receiver: advises each chunk and counts what the runtime's
   debug line counts.  */
struct run_plan
{
  int fd;
  struct plan_count count;
};

/* One WILLNEED call of a chunk (pbitmap_chunk_calls).  */
static void
plan_willneed (void *ctx, uint64_t first, uint64_t npages)
{
  struct run_plan *p = ctx;
  posix_fadvise (p->fd, (off_t) (first * PBITMAP_PAGE_SIZE),
                 (off_t) (npages * PBITMAP_PAGE_SIZE), POSIX_FADV_WILLNEED);
}

static void
plan_chunk (void *ctx, uint64_t first, uint64_t npages)
{
  struct run_plan *p = ctx;
  pbitmap_chunk_calls (first, npages, plan_willneed, p);
  plan_count_chunk (&p->count, first, npages);
}

/* Whether ELF has a PT_PRESENT_BITMAP at all: a file without one is
   passed over without a word.  */
static int
has_region (Elf *elf)
{
  size_t phnum;
  if (elf_getphdrnum (elf, &phnum) != 0)
    return 0;
  for (size_t i = 0; i < phnum; i++)
    {
      GElf_Phdr ph;
      if (gelf_getphdr (elf, (int) i, &ph) != NULL
          && ph.p_type == PT_PRESENT_BITMAP)
        return 1;
    }
  return 0;
}

/* The bitmap of the file PATH (open as FD and ELF) into *HDR and *BITS
   (malloc'ed: the region's bytes after its header, the bits and the
   read order), *MSB saying whether their order table is big-endian:
   from its region, or for a file without one from the store (store.c),
   whose entry's name goes to FROM.  0, or -1 when there is none or it
   cannot be read (with -v a warning says why).  */
static int
bitmap_of (const char *path, int fd, Elf *elf, uint64_t file_size,
           struct pbitmap_header *hdr, unsigned char **bits, int *msb,
           char *from, size_t fromsize)
{
  struct region r;
  char why[256];
  *bits = NULL;
  *msb = 0;
  *from = '\0';
  if (!has_region (elf))
    {
      int rc = store_bitmap (path, fd, elf, file_size, hdr, bits, from,
                             fromsize);
      if (rc != 0)
        run_say (path, "no bitmap (not linked with the pbitmap plugin)");
      return rc;
    }
  if (region_find (elf, NULL, fd, file_size, &r, why, sizeof why) != 0)
    {
      run_warn ("%s: %s; not prefetched", path, why);
      return -1;
    }
  *hdr = r.hdr;
  if (!(r.hdr.flags & PBITMAP_F_FILLED) || r.hdr.pages_set == 0)
    {
      if (store_bitmap (path, fd, elf, file_size, hdr, bits, from,
                        fromsize) == 0)
        return 0;
      run_say (path, "%s", r.hdr.flags & PBITMAP_F_FILLED ? "empty bitmap"
               : "bitmap not filled");
      return -1;
    }
  *msb = elf_msb (elf);
  size_t nbytes = (size_t) (r.size - PBITMAP_HEADER_SIZE);
  *bits = malloc (nbytes ? nbytes : 1);
  if (*bits == NULL
      || read_at (NULL, fd, r.offset + PBITMAP_HEADER_SIZE, *bits, nbytes) != 0)
    {
      run_warn ("%s: cannot read the bitmap: %s; not prefetched", path,
                strerror (errno));
      free (*bits);
      *bits = NULL;
      return -1;
    }
  return 0;
}

/* Advises the pages the bitmap of the file PATH (open as FD and ELF)
   marks.  */
static void
prefetch_file (const char *path, int fd, Elf *elf, uint64_t file_size)
{
  struct pbitmap_header hdr;
  unsigned char *bits;
  char from[PATH_MAX + 64];
  struct page_range *loads = NULL;
  long n_loads = -1;
  int msb;
  if (bitmap_of (path, fd, elf, file_size, &hdr, &bits, &msb, from,
                 sizeof from) != 0)
    return;
  const char *unplanned;
  if ((n_loads = load_ranges (elf, &loads, &unplanned)) < 0)
    {
      run_warn ("%s: cannot read the program headers: %s; not prefetched",
                path, elf_errmsg (-1));
      goto out;
    }
  if (unplanned != NULL)
    {
      run_warn ("%s: %s; not prefetched", path, unplanned);
      goto out;
    }

  struct run_plan p = { .fd = fd };
  struct pbitmap_chunker chunker;
  uint32_t gap = hdr.max_gap;
  char chosen[32] = "";
  if (hdr.flags & PBITMAP_F_GAP_AUTO)
    {
      enum pbitmap_device d = device_of_file (fd);
      gap = pbitmap_device_gap (d);
      snprintf (chosen, sizeof chosen, " gap=%" PRIu32 " (%s)", gap,
                pbitmap_device_name (d));
    }
  pbitmap_chunker_init (&chunker, gap, plan_chunk, &p);
  struct plan_order order = {
    bits + pbitmap_order_offset (hdr.capacity) - PBITMAP_HEADER_SIZE,
    pbitmap_order_len (&hdr), msb };
  plan_bitmap (loads, (size_t) n_loads, bits, hdr.capacity, &order,
               &chunker);
  run_say (path, "pages=%" PRIu64 " runs=%" PRIu64 " reads=%" PRIu64 "%s%s%s",
           p.count.pages, chunker.runs, p.count.reads, chosen,
           *from ? " from " : "", from);

out:
  free (loads);
  free (bits);
}

/* ---- what a file needs ------------------------------------------------- */

/* The NUL-terminated string at OFFSET of FD, at most LIMIT bytes with its
   NUL, or null.  */
static char *
read_string (int fd, uint64_t offset, uint64_t limit)
{
  char buf[RUN_STRING_MAX];
  size_t want = limit < sizeof buf ? (size_t) limit : sizeof buf;
  ssize_t got = want > 0 ? pread (fd, buf, want, (off_t) offset) : 0;
  char *nul = got > 0 ? memchr (buf, '\0', (size_t) got) : NULL;
  return nul != NULL ? strdup (buf) : NULL;
}

static int
add_needed (struct object *o, char *name)
{
  if (name == NULL
      || array_reserve ((void **) &o->needed, &o->alloc, o->n_needed,
                        sizeof *o->needed) != 0)
    {
      free (name);
      return -1;
    }
  o->needed[o->n_needed++] = name;
  return 0;
}

/* Reads the DT_NEEDED names, DT_RPATH, DT_RUNPATH and DF_1_NODEFLIB of O
   from its PT_DYNAMIC at PH.  */
static void
read_dynamic (struct object *o, int fd, Elf *elf, const GElf_Phdr *ph)
{
  Elf_Data *data = elf_getdata_rawchunk (elf, (int64_t) ph->p_offset,
                                         ph->p_filesz, ELF_T_DYN);
  if (data == NULL)
    return;
  GElf_Dyn dyn;
  uint64_t strtab = 0, strsz = 0, rpath = UINT64_MAX, runpath = UINT64_MAX;
  for (int i = 0; gelf_getdyn (data, i, &dyn) != NULL
                  && dyn.d_tag != DT_NULL; i++)
    if (dyn.d_tag == DT_STRTAB)
      strtab = dyn.d_un.d_ptr;
    else if (dyn.d_tag == DT_STRSZ)
      strsz = dyn.d_un.d_val;
    else if (dyn.d_tag == DT_RPATH)
      rpath = dyn.d_un.d_val;
    else if (dyn.d_tag == DT_RUNPATH)
      runpath = dyn.d_un.d_val;
    else if (dyn.d_tag == DT_FLAGS_1 && (dyn.d_un.d_val & DF_1_NODEFLIB))
      o->ld.nodeflib = 1;

  uint64_t base;
  if (strtab == 0 || vaddr_offset (elf, strtab, &base) != 0)
    return;
  for (int i = 0; gelf_getdyn (data, i, &dyn) != NULL
                  && dyn.d_tag != DT_NULL; i++)
    if (dyn.d_tag == DT_NEEDED && dyn.d_un.d_val < strsz
        && add_needed (o, read_string (fd, base + dyn.d_un.d_val,
                                       strsz - dyn.d_un.d_val)) != 0)
      return;
  /* An object with a DT_RUNPATH has its DT_RPATH ignored.  */
  if (runpath < strsz)
    o->runpath = read_string (fd, base + runpath, strsz - runpath);
  else if (rpath < strsz)
    o->rpath = read_string (fd, base + rpath, strsz - rpath);
  o->ld.rpath = o->rpath;
  o->ld.runpath = o->runpath;
}

/* The file's PT_INTERP, for the executable.  */
static char *
read_interp (int fd, const GElf_Phdr *ph)
{
  return read_string (fd, ph->p_offset, ph->p_filesz);
}

/* Takes the file C opened as PATH, needed by LOADER: prefetches it and
   learns what it needs.  */
static void
take_file (struct launch *l, struct candidate *c, char *path,
           const struct object *loader)
{
  for (size_t i = 0; i < l->n_objs; i++)
    if (l->objs[i]->dev == c->st.st_dev && l->objs[i]->ino == c->st.st_ino)
      goto done;                /* the same file under another name */
  struct object *o = calloc (1, sizeof *o);
  if (o == NULL || array_reserve ((void **) &l->objs, &l->alloc, l->n_objs,
                                  sizeof *l->objs) != 0)
    {
      free (o);
      goto done;
    }
  l->objs[l->n_objs++] = o;
  o->path = path;
  path = NULL;
  o->dev = c->st.st_dev;
  o->ino = c->st.st_ino;
  /* $ORIGIN: the executable's real directory (ld.so asks /proc/self/exe),
     a library's directory as found.  */
  o->origin = loader == NULL ? realpath (o->path, NULL) : NULL;
  if (o->origin == NULL)
    o->origin = strdup (o->path);
  if (o->origin != NULL)
    {
      char *slash = strrchr (o->origin, '/');
      if (slash == NULL)
        strcpy (o->origin, ".");
      else
        slash[slash == o->origin] = '\0';
    }
  o->ld.origin = o->origin;
  o->ld.loader = loader != NULL ? &loader->ld : NULL;

  GElf_Ehdr eh;
  gelf_getehdr (c->elf, &eh);
  if (l->n_objs == 1)
    {
      l->elfclass = eh.e_ident[EI_CLASS];
      l->data = eh.e_ident[EI_DATA];
      l->machine = eh.e_machine;
    }
  prefetch_file (o->path, c->fd, c->elf, (uint64_t) c->st.st_size);

  size_t phnum;
  if (elf_getphdrnum (c->elf, &phnum) == 0)
    for (size_t i = 0; i < phnum; i++)
      {
        GElf_Phdr ph;
        if (gelf_getphdr (c->elf, (int) i, &ph) == NULL)
          continue;
        if (ph.p_type == PT_DYNAMIC)
          read_dynamic (o, c->fd, c->elf, &ph);
        else if (ph.p_type == PT_INTERP && loader == NULL && l->interp == NULL)
          l->interp = read_interp (c->fd, &ph);
      }

done:
  free (path);
  elf_end (c->elf);
  close (c->fd);
}

/* Whether library NAME was looked for before (ld.so loads a name once).  */
static int
name_seen (const struct launch *l, size_t upto, size_t upto_needed,
           const char *name)
{
  for (size_t i = 0; i <= upto && i < l->n_objs; i++)
    for (size_t j = 0; j < (i == upto ? upto_needed : l->objs[i]->n_needed);
         j++)
      if (strcmp (l->objs[i]->needed[j], name) == 0)
        return 1;
  return 0;
}

/* Prefetches the file EXE and everything it loads.  */
static void
launch_prefetch (struct launch *l, const char *exe)
{
  struct candidate c = { .launch = l, .fd = -1 };
  char *path = strdup (exe);
  if (path == NULL || !try_candidate (exe, &c))
    {
      run_say (exe, "not an ELF program; nothing prefetched");
      free (path);
      return;
    }
  take_file (l, &c, path, NULL);
  char *interp;
  if (l->interp != NULL && try_candidate (l->interp, &c))
    {
      if ((interp = strdup (l->interp)) != NULL)
        take_file (l, &c, interp, l->n_objs ? l->objs[0] : NULL);
      else
        {
          elf_end (c.elf);
          close (c.fd);
        }
    }

  for (size_t i = 0; i < l->n_objs; i++)
    for (size_t j = 0; j < l->objs[i]->n_needed; j++)
      {
        const struct object *o = l->objs[i];
        const char *name = o->needed[j];
        if (name_seen (l, i, j, name))
          continue;
        c.fd = -1;
        c.elf = NULL;
        if (ld_search (name, &o->ld, try_candidate, &c, &path))
          take_file (l, &c, path, o);
        else
          {
            /* Found, but its path could not be copied: let it go.  */
            if (c.fd >= 0)
              {
                elf_end (c.elf);
                close (c.fd);
              }
            run_warn ("%s (needed by %s): not found; not prefetched", name,
                      o->path);
          }
      }
}

static void
launch_free (struct launch *l)
{
  for (size_t i = 0; i < l->n_objs; i++)
    {
      struct object *o = l->objs[i];
      for (size_t j = 0; j < o->n_needed; j++)
        free (o->needed[j]);
      free (o->needed);
      free (o->path);
      free (o->origin);
      free (o->rpath);
      free (o->runpath);
      free (o);
    }
  free (l->objs);
  free (l->interp);
}

char *
find_program (const char *prog)
{
  if (strchr (prog, '/') != NULL)
    return strdup (prog);
  const char *path = getenv ("PATH");
  char fallback[256];
  if (path == NULL)
    {
      size_t n = confstr (_CS_PATH, fallback, sizeof fallback);
      path = n > 0 && n <= sizeof fallback ? fallback : "/bin:/usr/bin";
    }
  for (const char *p = path;;)
    {
      size_t len = strcspn (p, ":");
      char *candidate;
      struct stat st;
      if (asprintf (&candidate, "%.*s%s%s", (int) len, p, len ? "/" : "",
                    prog) < 0)
        return NULL;
      if (access (candidate, X_OK) == 0 && stat (candidate, &st) == 0
          && S_ISREG (st.st_mode))
        return candidate;
      free (candidate);
      if (p[len] == '\0')
        return NULL;
      p += len + 1;
    }
}

void
exec_program (const char *exe, char **argv)
{
  /* execvp hands a file the kernel refuses with ENOEXEC to /bin/sh as a
     script.  That is right for a script without "#!", but an ELF file
     of another machine would be read by the shell as text.  So the path
     found is exec'd first; only when the kernel refuses it is the file
     looked at, and for an ELF file the kernel's error is the error, as
     a shell reports it.  Anything else goes on as execvp would.  */
  if (exe != NULL)
    {
      execv (exe, argv);
      if (errno == ENOEXEC && starts_with (exe, ELFMAG, SELFMAG) > 0)
        {
          errno = ENOEXEC;
          return;
        }
    }
  execvp (argv[0], argv);
}

int
run_command (char **argv)
{
  struct launch l = { 0 };
  elf_version (EV_CURRENT);
  char *exe = find_program (argv[0]);
  if (exe != NULL)
    launch_prefetch (&l, exe);
  launch_free (&l);

  fflush (NULL);
  exec_program (exe, argv);
  int err = errno;
  free (exe);
  error (0, err, "error: %s", argv[0]);
  return err == ENOENT ? 127 : 126;
}

/* import.c: turn a perf page-fault recording into a trace.
 *
 * perf can sample every page fault of a program with its data address,
 * and it records the program's mappings; `perf script' prints both as
 * text.  The command line (see elfpatch(1)) is
 *
 *     perf record -e page-faults -c 1 -d -o perf.data -- PROG ARG...
 *     perf script -i perf.data -F pid,tid,event,addr \
 *         --show-mmap-events --show-task-events > perf.txt
 *     elfpatch --import-perf -o TRACE perf.txt
 *
 * and the lines read are these (others are ignored):
 *
 *     PID/TID PERF_RECORD_MMAP2 PID/TID: [0xSTART(0xLEN) @ PGOFF MAJ:MIN INO GEN]: PROT PATH
 *     PID/TID PERF_RECORD_MMAP PID/TID: [0xSTART(0xLEN) @ PGOFF]: PROT PATH
 *     PID/TID PERF_RECORD_FORK(PID:TID):(PPID:PTID)
 *     PID/TID PERF_RECORD_COMM exec: NAME:PID/TID
 *     PID/TID EVENT: ADDR
 *
 * The mappings of each process are replayed: a fork copies the parent's,
 * an exec drops them, a later mapping hides an earlier one it overlaps.
 * A fault at ADDR in a file mapping of its process counts file page
 * (ADDR - START + PGOFF) / 4096.  Faults outside file mappings (heap,
 * stack, anonymous memory) are not pages of a file.
 *
 * Each file is then bound to its identity as it is on this machine now,
 * like --record does at exit: the import must run where the program ran,
 * before the files change.  When the mapping event names the device and
 * inode, a file whose inode differs now (replaced since) is skipped with
 * a warning.
 *
 * What perf sees are faults, and a page mapped by fault-around (the
 * kernel maps the cached pages of a 64 KiB window around each fault)
 * never faults: a run with a warm cache or with read-around yields fewer
 * pages than it used.  Several imported runs, merged, fill the gaps; the
 * exact method of --record has none.
 *
 * The input is text from another program and may be damaged: lines are
 * read with a length limit, and a line of a known kind that does not
 * parse is an error naming the line.
 */

#include <errno.h>
#include <error.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "elfpatch.h"

#define PERF_LINE_MAX 65536

struct perf_map
{
  long pid;
  uint64_t start, end, pgoff;
  size_t file;                  /* index in the import's files */
};

struct import
{
  const char *path;
  unsigned line;
  struct perf_map *maps;
  size_t n_maps, maps_alloc;
  struct mapped_file *files;
  size_t n_files, files_alloc;
  uint64_t faults, counted;
};

static void
bad_line (struct import *im, const char *what)
{
  error (0, 0, "error: %s:%u: %s", im->path, im->line, what);
}

/* The file PATH (device MAJ:MIN, inode INO when HAS_ID) as an index in
   IM->files; opened and checked on first sight.  */
static long
import_file (struct import *im, const char *path, int has_id, unsigned maj,
             unsigned min, uint64_t ino)
{
  for (size_t i = 0; i < im->n_files; i++)
    if (strcmp (im->files[i].path, path) == 0
        && (!has_id || (im->files[i].ino == ino
                        && im->files[i].dev_major == maj
                        && im->files[i].dev_minor == min)))
      return (long) i;
  if (array_reserve ((void **) &im->files, &im->files_alloc, im->n_files,
                     sizeof *im->files) != 0)
    return -1;
  struct mapped_file *f = &im->files[im->n_files];
  memset (f, 0, sizeof *f);
  f->path = strdup (path);
  if (f->path == NULL)
    return -1;
  f->dev_major = maj;
  f->dev_minor = min;
  f->ino = ino;
  f->fd = open (path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  struct stat st;
  if (f->fd >= 0 && (fstat (f->fd, &st) != 0 || !S_ISREG (st.st_mode)))
    {
      close (f->fd);
      f->fd = -1;
    }
  if (f->fd < 0)
    elfpatch_warn ("%s: cannot open %s; not imported", im->path, path);
  else if (has_id && ((uint64_t) st.st_ino != ino || major (st.st_dev) != maj
                      || minor (st.st_dev) != min))
    {
      elfpatch_warn ("%s: %s was replaced since it was recorded; not "
                     "imported", im->path, path);
      close (f->fd);
      f->fd = -1;
    }
  return (long) im->n_files++;
}

static int
add_map (struct import *im, long pid, uint64_t start, uint64_t end,
         uint64_t pgoff, long file)
{
  if (array_reserve ((void **) &im->maps, &im->maps_alloc, im->n_maps,
                     sizeof *im->maps) != 0)
    return -1;
  struct perf_map *m = &im->maps[im->n_maps++];
  m->pid = pid;
  m->start = start;
  m->end = end;
  m->pgoff = pgoff;
  m->file = (size_t) file;
  return 0;
}

/* "[0xSTART(0xLEN) @ PGOFF MAJ:MIN INO GEN]: PROT PATH" or, from
   PERF_RECORD_MMAP and build-id recordings, with less between PGOFF and
   ']'.  */
static int
parse_mmap (struct import *im, long pid, const char *p)
{
  uint64_t start, len, pgoff, ino = 0;
  unsigned maj = 0, min = 0;
  int n = 0, has_id = 0;
  p = strchr (p, '[');
  if (p == NULL || sscanf (p, "[%" SCNx64 "(%" SCNx64 ") @ %" SCNi64 "%n",
                           &start, &len, &pgoff, &n) != 3
      || len == 0 || start > UINT64_MAX - len)
    {
      bad_line (im, "bad mmap event (expected '[0xSTART(0xLEN) @ PGOFF ...]')");
      return -1;
    }
  p += n;
  int m = 0;
  if (sscanf (p, " %x:%x %" SCNu64 " %*u]%n", &maj, &min, &ino, &m) == 3
      && m > 0)
    has_id = 1;
  const char *close = strstr (p, "]: ");
  const char *path = close != NULL ? strchr (close + 3, ' ') : NULL;
  if (path == NULL)
    {
      bad_line (im, "bad mmap event (expected ']: PROT PATH')");
      return -1;
    }
  path++;
  if (path[0] != '/' || strncmp (path, "//anon", 6) == 0 || (has_id && ino == 0))
    return 0;
  long file = import_file (im, path, has_id, maj, min, ino);
  if (file < 0 || add_map (im, pid, start, start + len, pgoff, file) != 0)
    {
      error (0, errno, "error: %s", im->path);
      return -1;
    }
  return 0;
}

/* PERF_RECORD_FORK(PID:TID):(PPID:PTID): a new process gets its parent's
   mappings (a new thread shares them).  */
static int
parse_fork (struct import *im, const char *p)
{
  long pid, tid, ppid, ptid;
  if (sscanf (p, "PERF_RECORD_FORK(%ld:%ld):(%ld:%ld)", &pid, &tid, &ppid,
              &ptid) != 4)
    {
      bad_line (im, "bad fork event (expected 'PERF_RECORD_FORK(PID:TID):"
                "(PPID:PTID)')");
      return -1;
    }
  if (pid == ppid)
    return 0;
  size_t n = im->n_maps;
  for (size_t i = 0; i < n; i++)
    if (im->maps[i].pid == ppid)
      {
        struct perf_map m = im->maps[i];
        if (add_map (im, pid, m.start, m.end, m.pgoff, (long) m.file) != 0)
          {
            error (0, errno, "error: %s", im->path);
            return -1;
          }
      }
  return 0;
}

/* An exec: the process's mappings are gone.  */
static void
drop_maps (struct import *im, long pid)
{
  size_t kept = 0;
  for (size_t i = 0; i < im->n_maps; i++)
    if (im->maps[i].pid != pid)
      im->maps[kept++] = im->maps[i];
  im->n_maps = kept;
}

/* A fault of PID at ADDR: the newest mapping holding it decides.  */
static int
count_fault (struct import *im, long pid, uint64_t addr)
{
  im->faults++;
  for (size_t i = im->n_maps; i-- > 0;)
    {
      const struct perf_map *m = &im->maps[i];
      if (m->pid != pid || addr < m->start || addr >= m->end)
        continue;
      struct mapped_file *f = &im->files[m->file];
      if (f->fd < 0)
        return 0;
      uint64_t page = (addr - m->start + m->pgoff) / PBITMAP_PAGE_SIZE;
      im->counted++;
      return mapped_file_add_page (f, page);
    }
  return 0;
}

static int
parse_line (struct import *im, const char *line)
{
  long pid, tid;
  int n = 0;
  if (sscanf (line, " %ld/%ld %n", &pid, &tid, &n) != 2 || n == 0)
    return 0;                   /* not a record line */
  const char *p = line + n;
  if (strncmp (p, "PERF_RECORD_MMAP", 16) == 0)
    return parse_mmap (im, pid, p);
  if (strncmp (p, "PERF_RECORD_FORK", 16) == 0)
    return parse_fork (im, p);
  if (strncmp (p, "PERF_RECORD_COMM exec:", 22) == 0)
    {
      drop_maps (im, pid);
      return 0;
    }
  if (strncmp (p, "PERF_RECORD_", 12) == 0)
    return 0;
  const char *colon = strchr (p, ':');
  if (colon == NULL || strchr (p, ' ') < colon)
    return 0;                   /* a field list without event and address */
  char *end;
  errno = 0;
  uint64_t addr = strtoull (colon + 1, &end, 16);
  if (errno != 0 || end == colon + 1 || strspn (end, " \t") != strlen (end))
    {
      bad_line (im, "bad sample (expected 'PID/TID EVENT: ADDR' from "
                "perf script -F pid,tid,event,addr)");
      return -1;
    }
  if (count_fault (im, pid, addr) != 0)
    {
      error (0, errno, "error: %s", im->path);
      return -1;
    }
  return 0;
}

static int
read_perf (struct import *im, FILE *in)
{
  char *line = NULL;
  size_t size = 0;
  ssize_t len;
  int rc = 0;
  while (rc == 0 && (len = getline (&line, &size, in)) >= 0)
    {
      im->line++;
      if (len > PERF_LINE_MAX || strlen (line) != (size_t) len)
        {
          bad_line (im, len > PERF_LINE_MAX ? "line too long"
                    : "line contains a NUL byte");
          rc = -1;
          break;
        }
      line[strcspn (line, "\n")] = '\0';
      rc = parse_line (im, line);
    }
  if (rc == 0 && ferror (in))
    {
      error (0, errno, "error: %s", im->path);
      rc = -1;
    }
  free (line);
  return rc;
}

int
import_perf_command (const char *input, const char *output)
{
  struct import im = { .path = input };
  struct trace t = { 0 };
  int status = 1;
  elf_version (EV_CURRENT);
  FILE *in = fopen (input, "re");
  if (in == NULL)
    {
      error (0, errno, "error: %s", input);
      return 1;
    }
  int rc = read_perf (&im, in);
  fclose (in);
  if (rc != 0)
    goto out;
  if (im.faults == 0)
    {
      error (0, 0, "error: %s: no page-fault samples (record with perf "
             "record -e page-faults -c 1 -d, print with perf script -F "
             "pid,tid,event,addr --show-mmap-events)", input);
      goto out;
    }
  t.command = strdup ("perf");
  for (size_t i = 0; i < im.n_files; i++)
    if (im.files[i].fd >= 0 && im.files[i].n_pages > 0
        && mapped_file_block (&im.files[i], &t) != 0)
      goto out;
  if (trace_write (output, &t) != 0)
    goto out;
  elfpatch_note ("%s: %" PRIu64 " of %" PRIu64 " faults in %zu files",
                 output, im.counted, im.faults, t.n_blocks);
  status = 0;

out:
  trace_free (&t);
  for (size_t i = 0; i < im.n_files; i++)
    mapped_file_release (&im.files[i]);
  free (im.files);
  free (im.maps);
  return status;
}

/* record.c: run a program once and write down which file pages it used.
 *
 * The working set of a run is read from the process itself, just before
 * it is gone: the program runs as a ptrace child with PTRACE_O_TRACEEXIT,
 * so the kernel stops it in exit, after the program's last instruction
 * but while its address space still exists.  At that stop
 * /proc/PID/maps lists the mappings and /proc/PID/pagemap says, for each
 * page of a mapping, whether it is present (bit 63).  A present page of
 * a file mapping at file offset OFFSET maps file page OFFSET / 4096 +
 * index: that page was read from the file during the run.  Private pages
 * that were copied on write (relocated data) count too: the file page was
 * read to make them.  This needs no privilege for one's own child.
 *
 * Every file-backed mapping (a path starting with '/') is recorded: the
 * program, its libraries, the dynamic linker, mapped data files; a fill
 * picks out the blocks of the file it fills.  Each file is opened at the
 * exit stop and checked to be the inode that is mapped (a file deleted or
 * replaced since it was mapped is skipped), and the trace binds the pages
 * to that file's identity (build-id, or size and hash).
 *
 * Only the process itself is traced, not its children or threads it
 * creates; the exit stop is the main thread's.  The program keeps its
 * standard streams; elfpatch ignores SIGINT and SIGQUIT while it runs
 * (like system(3)), so an interrupted program still yields a trace.  Its
 * exit status does not become elfpatch's: a program that fails is
 * reported in a warning, and its trace is written all the same.
 */

#include <errno.h>
#include <error.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "elfpatch.h"

#define PAGEMAP_PRESENT (UINT64_C (1) << 63)
#define PAGEMAP_CHUNK 4096      /* entries per pread */

/* One mapped file and the file pages found present.  */
struct mapped_file
{
  unsigned dev_major, dev_minor;
  uint64_t ino;
  char *path;
  int fd;                       /* -1: skipped */
  uint64_t *pages;
  size_t n_pages, alloc;
};

struct recording
{
  struct mapped_file *files;
  size_t n_files, alloc;
  int captured;
};

static int
add_page (struct mapped_file *f, uint64_t page)
{
  if (array_reserve ((void **) &f->pages, &f->alloc, f->n_pages,
                     sizeof *f->pages) != 0)
    return -1;
  f->pages[f->n_pages++] = page;
  return 0;
}

/* The kernel writes a newline in a path as "\012".  */
static void
unescape_maps_path (char *path)
{
  char *out = path;
  for (const char *p = path; *p != '\0'; p++)
    if (strncmp (p, "\\012", 4) == 0)
      {
        *out++ = '\n';
        p += 3;
      }
    else
      *out++ = *p;
  *out = '\0';
}

/* Whether maps says the file was deleted (or is a memfd).  */
static int
is_deleted (const char *path)
{
  static const char deleted[] = " (deleted)";
  size_t len = strlen (path);
  return len >= sizeof deleted - 1
         && strcmp (path + len - (sizeof deleted - 1), deleted) == 0;
}

/* Why a mapped file is not recorded.  */
enum skip { RECORDED, SKIP_QUIETLY, SKIP_REPLACED };

/* Opens the file of a mapping and checks it is the mapped inode, a
   regular file (not a device such as /dev/zero).  */
static int
open_mapped (pid_t pid, uint64_t start, uint64_t end, const char *path,
             uint64_t ino, enum skip *why)
{
  struct stat st;
  *why = SKIP_QUIETLY;
  if (is_deleted (path))
    return -1;
  int fd = open (path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0 || fstat (fd, &st) != 0 || (uint64_t) st.st_ino != ino)
    {
      /* Stacked file systems (overlayfs) may show the inode of the layer
         below in maps; the map_files link (root only) opens the mapped
         file itself.  */
      char link[96];
      snprintf (link, sizeof link, "/proc/%d/map_files/%" PRIx64 "-%" PRIx64,
                (int) pid, start, end);
      if (fd >= 0)
        close (fd);
      fd = open (link, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
      if (fd < 0 || fstat (fd, &st) != 0)
        {
          if (fd >= 0)
            close (fd);
          *why = SKIP_REPLACED;
          return -1;
        }
    }
  if (!S_ISREG (st.st_mode))
    {
      close (fd);
      return -1;
    }
  *why = RECORDED;
  return fd;
}

static struct mapped_file *
find_file (struct recording *rec, pid_t pid, unsigned maj, unsigned min,
           uint64_t ino, uint64_t start, uint64_t end, char *path)
{
  for (size_t i = 0; i < rec->n_files; i++)
    {
      struct mapped_file *f = &rec->files[i];
      if (f->dev_major == maj && f->dev_minor == min && f->ino == ino)
        return f;
    }
  if (array_reserve ((void **) &rec->files, &rec->alloc, rec->n_files,
                     sizeof *rec->files) != 0)
    return NULL;
  struct mapped_file *f = &rec->files[rec->n_files];
  memset (f, 0, sizeof *f);
  unescape_maps_path (path);
  f->path = strdup (path);
  if (f->path == NULL)
    return NULL;
  f->dev_major = maj;
  f->dev_minor = min;
  f->ino = ino;
  enum skip why;
  f->fd = open_mapped (pid, start, end, path, ino, &why);
  if (why == SKIP_QUIETLY)
    elfpatch_note ("%s: not recorded", path);
  else if (why == SKIP_REPLACED)
    elfpatch_warn ("%s: replaced since it was mapped; not recorded", path);
  rec->n_files++;
  return f;
}

/* Adds the present pages of the mapping [START, END) at file OFFSET.  */
static int
scan_mapping (int pagemap, uint64_t start, uint64_t end, uint64_t offset,
              struct mapped_file *f)
{
  static uint64_t entries[PAGEMAP_CHUNK];
  uint64_t npages = (end - start) / PBITMAP_PAGE_SIZE;
  uint64_t first_vpage = start / PBITMAP_PAGE_SIZE;
  for (uint64_t done = 0; done < npages;)
    {
      size_t want = npages - done < PAGEMAP_CHUNK
                    ? (size_t) (npages - done) : PAGEMAP_CHUNK;
      ssize_t got = pread (pagemap, entries, want * sizeof *entries,
                           (off_t) ((first_vpage + done) * sizeof *entries));
      if (got < 0 && errno == EINTR)
        continue;
      if (got <= 0 || got % sizeof *entries != 0)
        return -1;
      size_t n = (size_t) got / sizeof *entries;
      for (size_t i = 0; i < n; i++)
        if ((entries[i] & PAGEMAP_PRESENT)
            && add_page (f, offset / PBITMAP_PAGE_SIZE + done + i) != 0)
          return -1;
      done += n;
    }
  return 0;
}

/* At the exit stop: reads the maps and pagemap of PID.  */
static int
capture (pid_t pid, struct recording *rec)
{
  char name[64];
  snprintf (name, sizeof name, "/proc/%d/maps", (int) pid);
  FILE *maps = fopen (name, "re");
  snprintf (name, sizeof name, "/proc/%d/pagemap", (int) pid);
  int pagemap = open (name, O_RDONLY | O_CLOEXEC);
  char *line = NULL;
  size_t linesize = 0;
  int rc = 0;
  if (maps == NULL || pagemap < 0)
    {
      error (0, errno, "error: %s", name);
      rc = -1;
    }

  while (rc == 0 && getline (&line, &linesize, maps) > 0)
    {
      uint64_t start, end, offset, ino;
      unsigned maj, min;
      int path_at = 0;
      line[strcspn (line, "\n")] = '\0';
      if (sscanf (line, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64 " %x:%x %"
                  SCNu64 " %n", &start, &end, &offset, &maj, &min, &ino,
                  &path_at) < 6 || path_at == 0)
        continue;
      char *path = line + path_at;
      if (path[0] != '/' || ino == 0)
        continue;
      struct mapped_file *f = find_file (rec, pid, maj, min, ino, start, end,
                                         path);
      if (f == NULL)
        {
          error (0, errno, "error: %s", name);
          rc = -1;
        }
      else if (f->fd >= 0 && scan_mapping (pagemap, start, end, offset, f) != 0)
        {
          error (0, errno ? errno : EIO, "error: %s", name);
          rc = -1;
        }
    }
  free (line);
  if (maps != NULL)
    fclose (maps);
  if (pagemap >= 0)
    close (pagemap);
  rec->captured = rc == 0;
  return rc;
}

static int
u64_cmp (const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
  return x < y ? -1 : x > y;
}

/* One trace block for F: its identity and its pages as ranges.  */
static int
file_block (struct mapped_file *f, struct trace *t)
{
  struct stat st;
  if (fstat (f->fd, &st) != 0)
    {
      error (0, errno, "error: %s", f->path);
      return -1;
    }
  Elf *elf = elf_begin (f->fd, ELF_C_READ_MMAP, NULL);
  Elf *as_elf = elf != NULL && elf_kind (elf) == ELF_K_ELF ? elf : NULL;
  struct trace_block *b = trace_add_block (t, f->path);
  int rc = -1;
  if (b == NULL)
    error (0, errno, "error: %s", f->path);
  else
    rc = identity_compute (f->path, as_elf, NULL, f->fd,
                           (uint64_t) st.st_size, &b->id);
  if (elf != NULL)
    elf_end (elf);

  if (f->n_pages > 1)
    qsort (f->pages, f->n_pages, sizeof *f->pages, u64_cmp);
  for (size_t i = 0; i < f->n_pages && rc == 0; i++)
    {
      uint64_t page = f->pages[i];
      if (b->n_ranges > 0 && page <= b->ranges[b->n_ranges - 1].last)
        continue;               /* mapped twice */
      if (trace_block_add_range (b, page, page) != 0)
        {
          error (0, errno, "error: %s", f->path);
          rc = -1;
        }
    }
  return rc;
}

static char *
join_command (char **argv)
{
  size_t len = 1;
  for (char **a = argv; *a != NULL; a++)
    len += strlen (*a) + 1;
  char *s = malloc (len);
  if (s == NULL)
    return NULL;
  s[0] = '\0';
  for (char **a = argv; *a != NULL; a++)
    {
      if (a != argv)
        strcat (s, " ");
      strcat (s, *a);
    }
  return s;
}

static int
wait_child (pid_t pid, int *status)
{
  while (waitpid (pid, status, 0) < 0)
    if (errno != EINTR)
      {
        error (0, errno, "error: waitpid");
        return -1;
      }
  return 0;
}

/* Runs the traced child to its end, capturing at its exit stop.  */
static int
trace_child (pid_t pid, const char *prog, struct recording *rec,
             int *status)
{
  long options = PTRACE_O_TRACEEXIT | PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL;
  if (ptrace (PTRACE_SETOPTIONS, pid, 0, options) != 0
      || ptrace (PTRACE_CONT, pid, 0, 0) != 0)
    {
      error (0, errno, "error: %s: ptrace", prog);
      kill (pid, SIGKILL);
      wait_child (pid, status);
      return -1;
    }
  int rc = 0;
  for (;;)
    {
      if (wait_child (pid, status) != 0)
        return -1;
      if (!WIFSTOPPED (*status))
        return rc;
      int sig = WSTOPSIG (*status), event = *status >> 16;
      if (sig == SIGTRAP && event == PTRACE_EVENT_EXIT)
        {
          if (capture (pid, rec) != 0)
            rc = -1;
          sig = 0;
        }
      else if (sig == SIGTRAP && event != 0)
        sig = 0;
      else
        {
          siginfo_t si;
          if (ptrace (PTRACE_GETSIGINFO, pid, 0, &si) != 0)
            sig = 0;            /* a group-stop: resume it */
        }
      ptrace (PTRACE_CONT, pid, 0, (void *) (long) sig);
    }
}

/* Starts PROG under ptrace; returns its pid, stopped after exec.  */
static pid_t
start_child (char **argv)
{
  int report[2];
  if (pipe2 (report, O_CLOEXEC) != 0)
    {
      error (0, errno, "error: pipe");
      return -1;
    }
  fflush (NULL);
  pid_t pid = fork ();
  if (pid < 0)
    {
      error (0, errno, "error: fork");
      return -1;
    }
  if (pid == 0)
    {
      close (report[0]);
      int err = 0;
      if (ptrace (PTRACE_TRACEME, 0, 0, 0) != 0)
        err = errno;
      else
        {
          execvp (argv[0], argv);
          err = errno;
        }
      if (write (report[1], &err, sizeof err) < 0)
        _exit (127);
      _exit (127);
    }
  close (report[1]);

  int status, err = 0;
  if (wait_child (pid, &status) != 0)
    return -1;
  ssize_t n = read (report[0], &err, sizeof err);
  close (report[0]);
  if (n == sizeof err || !WIFSTOPPED (status))
    {
      error (0, n == sizeof err ? err : 0, "error: %s%s", argv[0],
             n == sizeof err ? "" : ": did not start");
      if (WIFSTOPPED (status))
        {
          kill (pid, SIGKILL);
          wait_child (pid, &status);
        }
      return -1;
    }
  return pid;
}

static void
report_status (const char *prog, int status)
{
  if (WIFEXITED (status) && WEXITSTATUS (status) != 0)
    elfpatch_warn ("%s: exited with status %d", prog, WEXITSTATUS (status));
  else if (WIFSIGNALED (status))
    elfpatch_warn ("%s: killed by signal %d (%s)", prog, WTERMSIG (status),
                   strsignal (WTERMSIG (status)));
}

static void
free_recording (struct recording *rec)
{
  for (size_t i = 0; i < rec->n_files; i++)
    {
      free (rec->files[i].path);
      free (rec->files[i].pages);
      if (rec->files[i].fd >= 0)
        close (rec->files[i].fd);
    }
  free (rec->files);
}

int
record_command (char **argv, const char *output)
{
  struct recording rec = { 0 };
  struct trace t = { 0 };
  int status = 1, child_status = 0;
  struct sigaction ignore = { .sa_handler = SIG_IGN }, old_int, old_quit;

  elf_version (EV_CURRENT);
  pid_t pid = start_child (argv);
  if (pid < 0)
    return 1;
  sigaction (SIGINT, &ignore, &old_int);
  sigaction (SIGQUIT, &ignore, &old_quit);
  int rc = trace_child (pid, argv[0], &rec, &child_status);
  sigaction (SIGINT, &old_int, NULL);
  sigaction (SIGQUIT, &old_quit, NULL);
  if (rc != 0)
    goto out;
  report_status (argv[0], child_status);
  if (!rec.captured)
    {
      error (0, 0, "error: %s: ended before its pages could be read",
             argv[0]);
      goto out;
    }

  t.command = join_command (argv);
  uint64_t pages = 0;
  for (size_t i = 0; i < rec.n_files; i++)
    if (rec.files[i].fd >= 0)
      {
        if (file_block (&rec.files[i], &t) != 0)
          goto out;
        const struct trace_block *b = &t.blocks[t.n_blocks - 1];
        for (size_t r = 0; r < b->n_ranges; r++)
          pages += b->ranges[r].last - b->ranges[r].first + 1;
      }
  if (trace_write (output, &t) != 0)
    goto out;
  elfpatch_note ("%s: %zu files, %" PRIu64 " pages", output, t.n_blocks,
                 pages);
  status = 0;

out:
  trace_free (&t);
  free_recording (&rec);
  return status;
}

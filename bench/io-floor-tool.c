/* io-floor-tool: the measuring half of bench/io-floor.
 *
 * bench/io-floor asks how fast a cold start can be on a slow device when
 * the reads are planned perfectly, so it needs three things the project's
 * tools do not give: the order in which a program first touches the pages
 * of its file, read plans made from that order, and the time a plan takes
 * to be read by itself.  Each is a subcommand; the files between them are
 * plain text, one record a line, so the script can sort and count them
 * with the usual tools.
 *
 *   order FILE -- PROG [ARG...]
 *       Runs PROG and polls mincore over FILE (mapped, never touched)
 *       every POLL_US microseconds until PROG exits.  Prints "PAGE MS CPU"
 *       for each page of FILE that became resident, in that order: MS is
 *       the time since the fork at which it was first seen, CPU the CPU
 *       time PROG had used by then (/proc/PID/schedstat, in ms: PROG's
 *       progress, which the waits for its faults do not inflate; PROG is
 *       taken to be single-threaded).  A first line "# elapsed MS cpu CPU
 *       pages N" gives PROG's wall and CPU time.  FILE must be
 *       wholly evicted before (it is an error otherwise), and read_ahead_kb
 *       should be 0, so that a page is resident when, and only when, PROG
 *       faulted on it.
 *
 *   plan GAP WIDTH ORDER
 *       Greedy windows over the pages of ORDER: a chunk starts at the
 *       first page not yet planned, takes each next needed page whose gap
 *       from the chunk's last page is at most GAP pages and that keeps
 *       the chunk within WIDTH pages, and ends at its last needed page.
 *       Prints "START COUNT FIRST_MS" per chunk, in page order, FIRST_MS
 *       being the earliest first touch of its pages.
 *
 *   prefetch [-w] PLAN FILE [-- PROG [ARG...]]
 *       Issues POSIX_FADV_WILLNEED for each chunk of PLAN (in the calls
 *       the runtime makes for a read, pbitmap_chunk_calls), in the order
 *       of its lines.  With -w it then polls mincore until every planned
 *       page is resident (reading those the page cache dropped, see
 *       wait_resident); without PROG it prints "ms MS reread N" (from the
 *       first call to the last page resident, or to the last call without
 *       -w; N pages read again).  With PROG it then execs PROG.
 *
 *   arrivals PLAN FILE
 *       Issues PLAN as prefetch does, then polls mincore every POLL_US
 *       microseconds until every planned page is resident (or none came
 *       for STALL_MS) and prints "MS PAGES" whenever the number of
 *       planned pages resident grew: when the reads arrived, which shows
 *       how a throttle paces them (bench/throttle-burst).
 *
 *   run -- PROG [ARG...]
 *       Runs PROG, its output to /dev/null, and prints "ms MS status S".
 *
 * Errors are one line, "io-floor-tool: error: ...", and exit status 1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <error.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../include/pbitmap-plan.h"

#define PAGE 4096
#define POLL_US 500
/* A wait that sees no planned page arrive for this long has lost some:
   see wait_resident.  At 200 IOPS a queue of reads ends a page every 5 ms. */
#define STALL_MS 1000

struct chunk
{
  long start;
  long count;
  double first_ms;
};

/* A file mapped for mincore only: its pages are never touched.  */
struct mapped
{
  int fd;
  size_t size;
  long pages;
  void *map;
  unsigned char *vec;
};

static double
now_ms (void)
{
  struct timespec t;
  clock_gettime (CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int
map_file (const char *path, struct mapped *m)
{
  struct stat st;
  m->fd = open (path, O_RDONLY);
  if (m->fd < 0 || fstat (m->fd, &st) != 0)
    error (1, errno, "error: %s", path);
  if (st.st_size == 0)
    error (1, 0, "error: %s: empty file", path);
  m->size = st.st_size;
  m->pages = (st.st_size + PAGE - 1) / PAGE;
  m->map = mmap (NULL, m->size, PROT_READ, MAP_SHARED, m->fd, 0);
  m->vec = malloc (m->pages);
  if (m->map == MAP_FAILED || m->vec == NULL)
    error (1, errno, "error: %s: cannot map it", path);
  return 0;
}

static void
poll_residency (struct mapped *m)
{
  if (mincore (m->map, m->size, m->vec) != 0)
    error (1, errno, "error: mincore");
}

static pid_t
spawn (char **argv, int quiet)
{
  pid_t pid = fork ();
  if (pid < 0)
    error (1, errno, "error: fork");
  if (pid == 0)
    {
      if (quiet)
        {
          int null = open ("/dev/null", O_WRONLY);
          if (null >= 0)
            dup2 (null, STDOUT_FILENO);
        }
      execvp (argv[0], argv);
      error (127, errno, "error: %s", argv[0]);
    }
  return pid;
}

/* The CPU time PID has used, in ms, or -1 once it is gone.  */
static double
cpu_ms (pid_t pid)
{
  char path[64];
  unsigned long long ns;
  snprintf (path, sizeof path, "/proc/%d/schedstat", (int) pid);
  FILE *f = fopen (path, "r");
  if (f == NULL)
    return -1;
  int ok = fscanf (f, "%llu", &ns) == 1;
  fclose (f);
  return ok ? ns / 1e6 : -1;
}

/* The first-touch time and CPU time of every page of M, -1 for the
   untouched.  */
static void
note_new_pages (struct mapped *m, double *first, double *cpu, double t,
                double c)
{
  poll_residency (m);
  for (long i = 0; i < m->pages; i++)
    if ((m->vec[i] & 1) && first[i] < 0)
      first[i] = t, cpu[i] = c;
}

static int
by_time (const void *a, const void *b, void *arg)
{
  const double *first = arg;
  long x = *(const long *) a, y = *(const long *) b;
  if (first[x] != first[y])
    return first[x] < first[y] ? -1 : 1;
  return (x > y) - (x < y);
}

static int
cmd_order (const char *path, char **argv)
{
  struct mapped m;
  map_file (path, &m);
  poll_residency (&m);
  long resident = 0;
  for (long i = 0; i < m.pages; i++)
    resident += m.vec[i] & 1;
  if (resident != 0)
    error (1, 0, "error: %s: %ld pages resident before the run", path,
           resident);

  double *first = malloc (m.pages * sizeof *first);
  double *cpu = malloc (m.pages * sizeof *cpu);
  long *order = malloc (m.pages * sizeof *order);
  if (first == NULL || cpu == NULL || order == NULL)
    error (1, errno, "error: out of memory");
  for (long i = 0; i < m.pages; i++)
    first[i] = -1;

  double t0 = now_ms ();
  pid_t pid = spawn (argv, 1);
  int status;
  struct rusage usage;
  double c = 0;
  while (wait4 (pid, &status, WNOHANG, &usage) != pid)
    {
      double now = cpu_ms (pid);
      c = now >= 0 ? now : c;
      note_new_pages (&m, first, cpu, now_ms () - t0, c);
      usleep (POLL_US);
    }
  double elapsed = now_ms () - t0;
  double total = (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e3
                 + (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e3;
  note_new_pages (&m, first, cpu, elapsed, total);
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
    error (1, 0, "error: %s failed (wait status %d)", argv[0], status);

  long n = 0;
  for (long i = 0; i < m.pages; i++)
    if (first[i] >= 0)
      order[n++] = i;
  qsort_r (order, n, sizeof *order, by_time, first);
  printf ("# elapsed %.2f cpu %.2f pages %ld\n", elapsed, total, n);
  for (long i = 0; i < n; i++)
    printf ("%ld %.2f %.2f\n", order[i], first[order[i]], cpu[order[i]]);
  return 0;
}

static int
cmd_plan (long gap, long width, const char *path)
{
  FILE *in = fopen (path, "r");
  if (in == NULL)
    error (1, errno, "error: %s", path);
  long max_page = -1, page;
  double ms;
  char line[256];
  /* Two passes: the largest page sizes the arrays.  */
  while (fgets (line, sizeof line, in))
    if (line[0] != '#' && sscanf (line, "%ld %lf", &page, &ms) == 2
        && page > max_page)
      max_page = page;
  double *first = malloc ((max_page + 1) * sizeof *first);
  if (max_page < 0 || first == NULL)
    error (1, 0, "error: %s: no pages", path);
  for (long i = 0; i <= max_page; i++)
    first[i] = -1;
  rewind (in);
  while (fgets (line, sizeof line, in))
    if (line[0] != '#' && sscanf (line, "%ld %lf", &page, &ms) == 2
        && page >= 0)
      first[page] = ms;
  fclose (in);

  long p = 0;
  while (p <= max_page)
    {
      if (first[p] < 0)
        {
          p++;
          continue;
        }
      long last = p;
      double earliest = first[p];
      for (long q = p + 1; q <= max_page && q < p + width; q++)
        if (first[q] >= 0)
          {
            if (q - last - 1 > gap)
              break;
            last = q;
            if (first[q] < earliest)
              earliest = first[q];
          }
      printf ("%ld %ld %.2f\n", p, last - p + 1, earliest);
      p = last + 1;
    }
  return 0;
}

static struct chunk *
read_plan (const char *path, long *count)
{
  FILE *in = fopen (path, "r");
  if (in == NULL)
    error (1, errno, "error: %s", path);
  long n = 0, cap = 256;
  struct chunk *c = malloc (cap * sizeof *c);
  char line[256];
  while (c != NULL && fgets (line, sizeof line, in))
    {
      if (n == cap)
        c = realloc (c, (cap *= 2) * sizeof *c);
      if (c != NULL
          && sscanf (line, "%ld %ld %lf", &c[n].start, &c[n].count,
                     &c[n].first_ms) == 3)
        n++;
    }
  if (c == NULL)
    error (1, errno, "error: out of memory");
  fclose (in);
  *count = n;
  return c;
}

/* The planned pages not resident; with READ, read each of them.  */
static long
missing_pages (struct mapped *m, const struct chunk *c, long n, int read)
{
  char byte;
  long missing = 0;
  poll_residency (m);
  for (long i = 0; i < n; i++)
    for (long p = c[i].start; p < c[i].start + c[i].count && p < m->pages; p++)
      if (!(m->vec[p] & 1))
        {
          missing++;
          if (read && pread (m->fd, &byte, 1, p * PAGE) != 1)
            error (1, errno, "error: cannot read page %ld", p);
        }
  return missing;
}

/* Waits until every planned page is resident.  A page read ahead can
   leave the page cache before anyone maps it: a DAMON scheme that pages
   out idle unmapped page cache drops it (seen with ~1,100 chunks queued
   at 200 IOPS, the drops all kdamond's, none with DAMON paused;
   bench/throttle.sh, pause_damon), and WILLNEED has no second go.
   After STALL_MS without progress the missing pages are read one by one,
   as the program's faults would, and their number returned; *IDLE is
   the time waited for nothing, which the floor does not count.  */
static long
wait_resident (struct mapped *m, const struct chunk *c, long n, double *idle)
{
  long left = missing_pages (m, c, n, 0), last = left;
  double since = now_ms ();
  while (left > 0)
    {
      usleep (POLL_US);
      left = missing_pages (m, c, n, 0);
      if (left < last)
        last = left, since = now_ms ();
      else if (now_ms () - since > STALL_MS)
        {
          *idle = now_ms () - since;
          missing_pages (m, c, n, 1);
          return left;
        }
    }
  return 0;
}

/* The file a chunk's WILLNEED calls go to.  */
struct target
{
  int fd;
  const char *path;
};

/* One WILLNEED call of a chunk (pbitmap_chunk_calls).  */
static void
willneed (void *ctx, uint64_t first, uint64_t npages)
{
  const struct target *t = ctx;
  int err = posix_fadvise (t->fd, (off_t) (first * PAGE),
                           (off_t) (npages * PAGE), POSIX_FADV_WILLNEED);
  if (err != 0)
    error (1, err, "error: %s: posix_fadvise", t->path);
}

/* WILLNEED for each of the N chunks C of the file PATH, mapped as M, in
   their order, each as the runtime issues a read: in the calls of
   pbitmap_chunk_calls, which a small read-ahead window cannot cut short
   (include/pbitmap-plan.h).  */
static void
issue (const struct mapped *m, const struct chunk *c, long n, const char *path)
{
  struct target t = { m->fd, path };
  for (long i = 0; i < n; i++)
    pbitmap_chunk_calls ((uint64_t) c[i].start, (uint64_t) c[i].count,
                         willneed, &t);
}

static int
cmd_prefetch (int wait, const char *plan, const char *path, char **argv)
{
  long n;
  struct chunk *c = read_plan (plan, &n);
  struct mapped m;
  map_file (path, &m);
  double t0 = now_ms ();
  issue (&m, c, n, path);
  double idle = 0;
  long reread = wait ? wait_resident (&m, c, n, &idle) : 0;
  double t = now_ms () - t0 - idle;
  if (argv == NULL)
    {
      printf ("ms %.2f reread %ld\n", t, reread);
      return 0;
    }
  if (reread > 0)
    fprintf (stderr, "io-floor-tool: %ld planned pages reread\n", reread);
  munmap (m.map, m.size);
  close (m.fd);
  execvp (argv[0], argv);
  error (1, errno, "error: %s", argv[0]);
  return 1;
}

static int
cmd_arrivals (const char *plan, const char *path)
{
  long n;
  struct chunk *c = read_plan (plan, &n);
  struct mapped m;
  map_file (path, &m);
  long planned = 0;
  for (long i = 0; i < n; i++)
    planned += c[i].count;
  double t0 = now_ms ();
  issue (&m, c, n, path);
  long resident = 0;
  double since = now_ms ();
  while (resident < planned && now_ms () - since <= STALL_MS)
    {
      long now_resident = planned - missing_pages (&m, c, n, 0);
      if (now_resident > resident)
        {
          resident = now_resident;
          since = now_ms ();
          printf ("%.2f %ld\n", since - t0, resident);
        }
      usleep (POLL_US);
    }
  return 0;
}

static int
cmd_run (char **argv)
{
  double t0 = now_ms ();
  pid_t pid = spawn (argv, 1);
  int status;
  if (waitpid (pid, &status, 0) != pid)
    error (1, errno, "error: waitpid");
  printf ("ms %.2f status %d\n", now_ms () - t0,
          WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status));
  return 0;
}

static void
usage (void)
{
  error (64, 0, "usage: order FILE -- PROG...; plan GAP WIDTH ORDER; "
         "prefetch [-w] PLAN FILE [-- PROG...]; arrivals PLAN FILE; "
         "run -- PROG...");
}

int
main (int argc, char **argv)
{
  if (argc < 2)
    usage ();
  const char *cmd = argv[1];
  if (strcmp (cmd, "order") == 0 && argc >= 5 && strcmp (argv[3], "--") == 0)
    return cmd_order (argv[2], argv + 4);
  if (strcmp (cmd, "plan") == 0 && argc == 5)
    return cmd_plan (atol (argv[2]), atol (argv[3]), argv[4]);
  if (strcmp (cmd, "prefetch") == 0)
    {
      int wait = argc > 2 && strcmp (argv[2], "-w") == 0;
      char **rest = argv + 2 + wait;
      int left = argc - 2 - wait;
      if (left == 2)
        return cmd_prefetch (wait, rest[0], rest[1], NULL);
      if (left >= 4 && strcmp (rest[2], "--") == 0)
        return cmd_prefetch (wait, rest[0], rest[1], rest + 3);
    }
  if (strcmp (cmd, "arrivals") == 0 && argc == 4)
    return cmd_arrivals (argv[2], argv[3]);
  if (strcmp (cmd, "run") == 0 && argc >= 4 && strcmp (argv[2], "--") == 0)
    return cmd_run (argv + 3);
  usage ();
  return 64;
}

/* policy.c: the link policy the plugin and pbitmap-ld share (policy.h).
 *
 * Options.  runtime-dir=DIR, no-runtime, capacity=PAGES,
 * hook=entry|preinit, order=FILE, verbose, quiet; the last of each
 * counts.  A value the option cannot take is a fatal error naming it as
 * given; an unknown option, hook=main included, is a fatal error listing
 * the known ones.
 *
 * Capacity.  The capacity (file pages the bitmap can describe) must be
 * fixed before the layout is, so it is estimated from the inputs: the
 * allocated section sizes, NOBITS included, plus the COMMON symbols of
 * each relocatable object, and LTO_GROWTH times the size of IR, which
 * carries no machine code yet.  To that a quarter is added for alignment
 * and linker-made sections, and 16 pages, and the sum is rounded up to a
 * multiple of 128 pages (the region is padded to 16 bytes anyway).  An
 * overestimate costs 32 bytes per MiB; an underestimate leaves the end of
 * the image out of the bitmap, which the report after the link warns
 * about, naming the capacity= to relink with.  A -z max-page-size above
 * 4 KiB on the linker's command line adds POLICY_PADDED_SEGMENTS times
 * it, the file space GNU ld and gold leave between segments.  The
 * plugin reads that line from /proc/self/cmdline (it runs inside the
 * linker), pbitmap-ld from its own arguments, both with their response
 * files read (argfile.c).  The plugin sees every
 * archive member the link loads (claim_file), pbitmap-ld only the files
 * on the command line, which is why it links a second time when the
 * image outgrows the estimate.
 *
 * Runtime.  An executable (PIE or not) gets pbitmap-rt.o, whose entry
 * slot the region's entry field points to; a shared library gets
 * pbitmap-rt-shared.o, whose mark the mark field points to.  Where the
 * runtime starts (hook=entry, the default, or hook=preinit): in a dynamic
 * executable always from .preinit_array, which glibc's dynamic linker
 * runs before any library's initializer, while the entry point only runs
 * after them all.  In a static executable the C library's start-up code
 * runs first and faults in pages of its own, so there the step after the
 * link makes the runtime's entry stub the entry point (patch.c);
 * .preinit_array stays as the fallback, and the runtime makes sure the
 * prefetch runs once.  hook=preinit keeps the linked entry point, so the
 * two can be compared.  The runtime objects are built for the machine
 * pbitmap is (x86-64); a link whose first relocatable input is of another
 * ELF class, byte order or machine (gcc -m32, -mx32) would fail on them,
 * so it is made as with no-runtime, after a warning.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <gelf.h>

#include "pbitmap-format.h"
#include "policy.h"

#ifndef PBITMAP_RUNTIME_DIR
# error "PBITMAP_RUNTIME_DIR must name the directory of the runtime objects"
#endif

#ifndef SHN_X86_64_LCOMMON
# define SHN_X86_64_LCOMMON 0xff02
#endif

/* Slack for what no input shows: linker-made sections, headers and
 * padding between segments. */
#define SLACK_PAGES 16
#define CAPACITY_ROUND 128

/* The options, in the order the list of known options names them. */
static const char *const known_options[] = {
  "runtime-dir=DIR", "no-runtime", "capacity=PAGES", "hook=entry|preinit",
  "order=FILE", "verbose", "quiet"
};

void
policy_init (struct link_policy *p, const char *spelling, const char *prefix)
{
  memset (p, 0, sizeof *p);
  p->spelling = spelling;
  p->prefix = prefix;
  p->runtime_dir = PBITMAP_RUNTIME_DIR;
  p->output = LDPO_EXEC;
}

/* Options. */

static bool
parse_capacity (const char *text, uint64_t *pages)
{
  char *end;
  unsigned long long value;

  if (*text < '0' || *text > '9')
    return false;
  errno = 0;
  value = strtoull (text, &end, 10);
  if (errno != 0 || *end != '\0' || value == 0
      || value > POLICY_CAPACITY_MAX)
    return false;
  *pages = value;
  return true;
}

/* The value of OPT when it is NAME=VALUE, or NULL. */
static const char *
value_of (const char *opt, const char *name)
{
  size_t n = strlen (name);

  return strncmp (opt, name, n) == 0 && opt[n] == '=' ? opt + n + 1 : NULL;
}

int
policy_option (struct link_policy *p, const char *opt, const char *given)
{
  const char *value;

  if ((value = value_of (opt, "runtime-dir")) != NULL)
    {
      if (*value == '\0')
        {
          plugin_message (LDPL_FATAL, "%s needs a directory", given);
          return -1;
        }
      p->runtime_dir = value;
    }
  else if ((value = value_of (opt, "order")) != NULL)
    {
      if (*value == '\0')
        {
          plugin_message (LDPL_FATAL, "%s needs an order file", given);
          return -1;
        }
      p->order = value;
    }
  else if ((value = value_of (opt, "capacity")) != NULL)
    {
      if (!parse_capacity (value, &p->capacity))
        {
          plugin_message (LDPL_FATAL, "%s: not a page count between 1 and "
                          "%" PRIu64, given, POLICY_CAPACITY_MAX);
          return -1;
        }
    }
  else if (strcmp (opt, "hook=entry") == 0)
    p->hook_preinit = false;
  else if (strcmp (opt, "hook=preinit") == 0)
    p->hook_preinit = true;
  else if (strcmp (opt, "no-runtime") == 0)
    p->no_runtime = true;
  else if (strcmp (opt, "verbose") == 0)
    p->verbose = true;
  else if (strcmp (opt, "quiet") == 0)
    p->quiet = true;
  else
    return 0;
  return 1;
}

void
policy_unknown_option (const struct link_policy *p, const char *given,
                       const char *own)
{
  char known[512];
  size_t len = 0;

  known[0] = '\0';
  if (own != NULL)
    len = snprintf (known, sizeof known, "%s", own);
  for (size_t i = 0; i < sizeof known_options / sizeof *known_options
       && len < sizeof known; i++)
    len += snprintf (known + len, sizeof known - len, "%s%s%s",
                     len != 0 ? ", " : "", p->prefix, known_options[i]);
  plugin_message (LDPL_FATAL, "unknown option '%s' (known: %s)", given,
                  known);
}

/* The estimate. */

static void
add_bytes (struct link_estimate *e, uint64_t bytes)
{
  e->bytes = e->bytes + bytes < e->bytes ? UINT64_MAX : e->bytes + bytes;
}

/* What SIZE bytes of IR will become (LTO_GROWTH). */
static uint64_t
ir_bytes (uint64_t size)
{
  return size > UINT64_MAX / LTO_GROWTH ? UINT64_MAX : size * LTO_GROWTH;
}

void
estimate_add_ir (struct link_estimate *e, uint64_t size)
{
  add_bytes (e, ir_bytes (size));
}

static uint64_t
common_bytes (Elf_Scn *symtab, const GElf_Shdr *shdr, uint16_t machine)
{
  Elf_Data *data = elf_getdata (symtab, NULL);
  uint64_t bytes = 0;
  size_t count;

  if (data == NULL || shdr->sh_entsize == 0)
    return 0;
  count = shdr->sh_size / shdr->sh_entsize;
  for (size_t i = 1; i < count; i++)
    {
      GElf_Sym sym;

      if (gelf_getsym (data, i, &sym) == NULL)
        break;
      if (sym.st_shndx == SHN_COMMON
          || (machine == EM_X86_64 && sym.st_shndx == SHN_X86_64_LCOMMON))
        bytes += sym.st_size;
    }
  return bytes;
}

/* Bytes the relocatable ELF of FILESIZE bytes will add to the image.  An
 * IR object's file size stands in for the code it will become. */
static uint64_t
relocatable_bytes (Elf *elf, const GElf_Ehdr *ehdr, uint64_t filesize)
{
  uint64_t bytes = 0;
  size_t shstrndx;
  bool lto = false;
  Elf_Scn *scn = NULL;

  if (elf_getshdrstrndx (elf, &shstrndx) != 0)
    shstrndx = SHN_UNDEF;
  while ((scn = elf_nextscn (elf, scn)) != NULL)
    {
      GElf_Shdr shdr;
      const char *name;

      if (gelf_getshdr (scn, &shdr) == NULL)
        continue;
      name = elf_strptr (elf, shstrndx, shdr.sh_name);
      if (name != NULL && strncmp (name, ".gnu.lto_", 9) == 0)
        lto = true;
      if (shdr.sh_flags & SHF_ALLOC)
        bytes += shdr.sh_size;
      if (shdr.sh_type == SHT_SYMTAB)
        bytes += common_bytes (scn, &shdr, ehdr->e_machine);
    }
  if (lto && ir_bytes (filesize) > bytes)
    bytes = ir_bytes (filesize);
  return bytes;
}

/* Counts the SIZE bytes at IMAGE. */
static void
estimate_image (struct link_estimate *e, char *image, size_t size,
                estimate_object_fn *fn, void *arg)
{
  Elf *elf = elf_memory (image, size);
  Elf_Kind kind = elf != NULL ? elf_kind (elf) : ELF_K_NONE;
  GElf_Ehdr ehdr;

  if (kind == ELF_K_NONE)
    {
      /* Not ELF, so something a compiler plugin will turn into code. */
      estimate_add_ir (e, size);
      e->inputs++;
    }
  else if (kind == ELF_K_ELF && gelf_getehdr (elf, &ehdr) != NULL
           && ehdr.e_type == ET_REL)
    {
      add_bytes (e, relocatable_bytes (elf, &ehdr, size));
      e->inputs++;
      if (!e->target_seen)
        reserve_target_of (&ehdr, &e->target);
      e->target_seen = true;
      if (fn != NULL)
        fn (elf, arg);
    }
  elf_end (elf);
}

/* The input is mapped privately and writably: libelf may convert headers
 * in place in an image it did not read itself. */
void
estimate_input (struct link_estimate *e, int fd, off_t offset, off_t size,
                estimate_object_fn *fn, void *arg)
{
  long page = sysconf (_SC_PAGESIZE);
  off_t base, lead;
  char *map;

  if (size <= 0 || offset < 0)
    return;
  base = offset & ~(off_t) (page - 1);
  lead = offset - base;
  map = mmap (NULL, lead + size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd,
              base);
  if (map == MAP_FAILED)
    {
      /* Count it unread: overestimating is cheap. */
      add_bytes (e, size);
      e->inputs++;
      return;
    }
  estimate_image (e, map + lead, size, fn, arg);
  munmap (map, lead + size);
}

const struct reserve_target *
estimate_target (struct link_estimate *e)
{
  if (!e->target_seen)
    reserve_default_target (&e->target);
  e->target_seen = true;
  return &e->target;
}

uint64_t
policy_capacity_for (uint64_t bytes)
{
  uint64_t grown = bytes > UINT64_MAX / 5 * 4 ? UINT64_MAX : bytes + bytes / 4;
  uint64_t pages = (grown / PBITMAP_PAGE_SIZE
                    + (grown % PBITMAP_PAGE_SIZE != 0) + SLACK_PAGES);

  pages = (pages + CAPACITY_ROUND - 1) / CAPACITY_ROUND * CAPACITY_ROUND;
  return pages > POLICY_CAPACITY_MAX ? POLICY_CAPACITY_MAX : pages;
}

int
policy_linker_argument (struct link_policy *p, const char *arg,
                        const char *next)
{
  static const char key[] = "max-page-size=";
  const char *value = NULL;
  int took_next = 0;
  char *end;
  unsigned long long size;

  if (strcmp (arg, "-z") == 0 && next != NULL)
    {
      took_next = 1;
      if (strncmp (next, key, sizeof key - 1) == 0)
        value = next + sizeof key - 1;
    }
  else if (strncmp (arg, "-z", 2) == 0
           && strncmp (arg + 2, key, sizeof key - 1) == 0)
    value = arg + 2 + sizeof key - 1;
  if (value == NULL)
    return took_next;
  errno = 0;
  size = strtoull (value, &end, 0);
  if (errno == 0 && end != value && *end == '\0'
      && size <= POLICY_MAX_PAGE_SIZE)
    p->max_page_size = size;
  return took_next;
}

uint64_t
policy_padding (const struct link_policy *p)
{
  if (p->max_page_size <= PBITMAP_PAGE_SIZE)
    return 0;
  return POLICY_PADDED_SEGMENTS * p->max_page_size;
}

uint64_t
policy_capacity (const struct link_policy *p, const struct link_estimate *e)
{
  uint64_t padding = policy_padding (p);

  if (p->capacity != 0)
    return p->capacity;
  return policy_capacity_for (e->bytes > UINT64_MAX - padding
                              ? UINT64_MAX : e->bytes + padding);
}

/* The region and the runtime. */

/* Whether the runtime of an executable goes into this link: only it has
 * the entry stub and its slot. */
static bool
executable_runtime (const struct link_policy *p)
{
  return !p->no_runtime && (p->output == LDPO_EXEC || p->output == LDPO_PIE);
}

enum reserve_link
policy_region_link (const struct link_policy *p)
{
  if (executable_runtime (p))
    return RESERVE_LINK_ENTRY;
  if (!p->no_runtime && p->output == LDPO_DYN)
    return RESERVE_LINK_MARK;
  return RESERVE_LINK_NONE;
}

bool
policy_redirect_entry (const struct link_policy *p)
{
  return executable_runtime (p) && !p->hook_preinit;
}

const char *
policy_output_kind (const struct link_policy *p)
{
  switch (p->output)
    {
    case LDPO_EXEC: return "executable";
    case LDPO_PIE: return "PIE";
    case LDPO_DYN: return "shared library";
    default: return "relocatable";
    }
}

int
policy_write_region (const struct link_policy *p,
                     const struct reserve_target *target, uint64_t capacity,
                     char **path)
{
  int fd = reserve_create_file (".o", path);
  int status;

  if (fd < 0)
    return -1;
  status = reserve_write_object (fd, *path, target, capacity,
                                 policy_region_link (p), p->gold);
  if (close (fd) != 0 && status == 0)
    {
      plugin_message (LDPL_FATAL, "%s: %s", *path, strerror (errno));
      status = -1;
    }
  return status;
}

/* A name for the ELF class and machine of T, for messages: "ELF32
 * i386". */
static void
describe_target (const struct reserve_target *t, char *buf, size_t size)
{
  const char *machine;

  switch (t->machine)
    {
    case EM_386: machine = "i386"; break;
    case EM_X86_64: machine = "x86-64"; break;
    case EM_AARCH64: machine = "AArch64"; break;
    case EM_ARM: machine = "ARM"; break;
    case EM_RISCV: machine = "RISC-V"; break;
    case EM_PPC: machine = "ppc"; break;
    case EM_PPC64: machine = "ppc64"; break;
    case EM_S390: machine = "s390"; break;
    default: machine = NULL; break;
    }
  if (machine != NULL)
    snprintf (buf, size, "ELF%d %s", t->elfclass == ELFCLASS64 ? 64 : 32,
              machine);
  else
    snprintf (buf, size, "ELF%d machine %u",
              t->elfclass == ELFCLASS64 ? 64 : 32, (unsigned) t->machine);
}

/* The target the object PATH was built for, into T; false when its
 * header cannot be read (the linker then says what is wrong with it). */
static bool
object_target (const char *path, struct reserve_target *t)
{
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  Elf *elf;
  GElf_Ehdr ehdr;
  bool read = false;

  if (fd < 0)
    return false;
  elf = elf_begin (fd, ELF_C_READ, NULL);
  if (elf != NULL && elf_kind (elf) == ELF_K_ELF
      && gelf_getehdr (elf, &ehdr) != NULL)
    {
      reserve_target_of (&ehdr, t);
      read = true;
    }
  elf_end (elf);
  close (fd);
  return read;
}

int
policy_runtime (struct link_policy *p, const struct reserve_target *target,
                char **path)
{
  const char *name = p->output == LDPO_DYN ? PBITMAP_RUNTIME_SHARED
                                           : PBITMAP_RUNTIME_EXEC;
  struct reserve_target built;

  *path = NULL;
  if (p->no_runtime)
    return 0;
  if (asprintf (path, "%s/%s", p->runtime_dir, name) < 0)
    {
      *path = NULL;
      plugin_message (LDPL_FATAL, "out of memory");
      return -1;
    }
  if (access (*path, R_OK) != 0)
    {
      plugin_message (LDPL_FATAL, "runtime object %s: %s (set "
                      "%sruntime-dir=DIR, or %sno-runtime to reserve the "
                      "region only)", *path, strerror (errno), p->spelling,
                      p->spelling);
      free (*path);
      *path = NULL;
      return -1;
    }
  if (object_target (*path, &built)
      && (built.elfclass != target->elfclass || built.data != target->data
          || built.machine != target->machine))
    {
      char link[48], runtime[48];

      describe_target (target, link, sizeof link);
      describe_target (&built, runtime, sizeof runtime);
      plugin_message (LDPL_WARNING, "%s link: the runtime %s is %s, so it "
                      "is not linked and nothing prefetches at start-up "
                      "(%sno-runtime says this is meant)", link, *path,
                      runtime, p->spelling);
      free (*path);
      *path = NULL;
      p->no_runtime = true;
      p->foreign_target = true;
    }
  return 0;
}

/* The report after the link. */

void
policy_report_output (const struct link_policy *p, const char *output,
                      uint64_t capacity, const struct patch_outcome *outcome)
{
  if (outcome->image_pages > capacity)
    plugin_message (LDPL_WARNING, "%s: the image has %" PRIu64 " pages but "
                    "the bitmap describes only %" PRIu64 "; relink with "
                    "-Wl,%scapacity=%" PRIu64 " to cover it all", output,
                    outcome->image_pages, capacity, p->spelling,
                    outcome->image_pages);
  if (outcome->entry == ENTRY_NOT_FOUND)
    plugin_message (LDPL_WARNING, "%s: static executable, but the runtime's "
                    "entry slot was not found; the prefetch runs from "
                    ".preinit_array instead", output);
  else if (outcome->entry == ENTRY_REDIRECTED && p->verbose)
    plugin_message (LDPL_INFO, "%s: static executable: the entry point is "
                    "the runtime's stub", output);
}

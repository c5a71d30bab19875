/* plugin.c: the pbitmap plugin for GNU ld, and how it sizes the region.
 *
 * No plugin hook can add a program header, so the plugin gets one in
 * three steps, all through the ordinary plugin interface
 * (binutils include/plugin-api.h):
 *
 *   claim_file        called for every object and every archive member
 *                     the link loads (ld.bfd offers whole archives too,
 *                     which are skipped).  The plugin never claims
 *                     anything; it only reads each relocatable input with
 *                     libelf and adds up what it will contribute to the
 *                     image.  Shared libraries are not part of it.
 *   all_symbols_read  called once all inputs are known.  The plugin writes
 *                     a small relocatable object holding the zero-filled
 *                     region as a 16-aligned note (reserve.c), hands it to
 *                     the linker with add_input_file, and adds the runtime
 *                     object that reads the region at start-up.  ld.bfd
 *                     places the orphan note right after .interp, inside
 *                     the first PT_LOAD, and gives it a PT_NOTE of its own
 *                     because no other note has its alignment.  gold
 *                     (it passes LDPT_GOLD_VERSION) does the same but may
 *                     let the PT_NOTE of its 4-aligned notes span the
 *                     region, so for gold the object also holds an empty
 *                     note that buys a spare program header (patch.c).
 *   cleanup           called after the output is written and closed.  The
 *                     plugin retypes that PT_NOTE to PT_PRESENT_BITMAP
 *                     (patch.c) and removes its temporary object.
 *
 * The capacity (file pages the bitmap can describe) must be fixed before
 * the layout is, so it is estimated from the inputs: allocated section
 * sizes, NOBITS included, plus COMMON symbols, plus a quarter for
 * alignment and linker-made sections, plus 16 pages, rounded up to a
 * multiple of 128 pages (the region is padded to 16 bytes anyway).  An
 * overestimate costs 32 bytes per MiB; an underestimate leaves the end of
 * the image out of the bitmap, so cleanup warns when the finished image
 * is larger than the capacity (on stderr; relinking with capacity= is
 * the remedy).  LTO IR objects count LTO_GROWTH times their size, both
 * those this plugin sees and those GCC's LTO plugin, loaded first,
 * claimed before it could (lto.c).
 *
 * Where the runtime starts (hook=entry, the default, or hook=preinit):
 * in a dynamic executable always from .preinit_array, which glibc's
 * dynamic linker runs before any library's initializer, while the entry
 * point only runs after them all.  In a static executable the C library's
 * start-up code runs first and faults in pages of its own, so there the
 * cleanup step makes the runtime's entry stub the entry point (patch.c);
 * .preinit_array stays as the fallback, and the runtime makes sure the
 * prefetch runs once.  hook=preinit keeps the linked entry point, so the
 * two can be compared.
 *
 * With order=FILE the plugin also applies a link order (an order file,
 * doc/format.md): it is read and checked when the plugin is loaded,
 * claim_file notes which input sections define its names, and
 * all_symbols_read hands the linker their order (place.c): ld.bfd as a
 * linker script, gold through its section-ordering interface.  cleanup
 * then reads the output's symbol table and says how much of the list it
 * holds in order (order.c).
 *
 * Options (-plugin-opt=OPT): runtime-dir=DIR, no-runtime, capacity=PAGES,
 * hook=entry|preinit, order=FILE, verbose, quiet.  Relocatable links (-r)
 * are left alone entirely.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <stdint.h>     /* plugin-api.h needs the fixed-width types first */
#include <plugin-api.h>
#include <gelf.h>

#include "pbitmap-format.h"
#include "plugin.h"

#ifndef PBITMAP_RUNTIME_DIR
# error "PBITMAP_RUNTIME_DIR must name the directory of the runtime objects"
#endif

#ifndef SHN_X86_64_LCOMMON
# define SHN_X86_64_LCOMMON 0xff02
#endif

#define RUNTIME_EXEC "pbitmap-rt.o"
#define RUNTIME_SHARED "pbitmap-rt-shared.o"

/* The linker's interface, as offered in onload. */
static ld_plugin_message tv_message;
static ld_plugin_register_claim_file tv_register_claim_file;
static ld_plugin_register_all_symbols_read tv_register_all_symbols_read;
static ld_plugin_register_cleanup tv_register_cleanup;
static ld_plugin_add_input_file tv_add_input_file;
static ld_plugin_update_section_order tv_update_section_order;      /* gold */
static ld_plugin_allow_section_ordering tv_allow_section_ordering;  /* gold */
static const char *tv_output_name;
static enum ld_plugin_output_file_type tv_linker_output;
static bool tv_linker_output_seen;
static bool tv_gold;                    /* the linker is gold */

/* Options. */
static const char *opt_runtime_dir = PBITMAP_RUNTIME_DIR;
static bool opt_no_runtime;
static bool opt_verbose;
static bool opt_quiet;
static bool opt_hook_preinit;           /* hook=preinit */
static uint64_t opt_capacity;           /* 0: estimate from the inputs */
static const char *opt_order;           /* order=FILE */

/* What the inputs told us. */
static uint64_t image_bytes;            /* estimated bytes of image */
static unsigned input_count;
static unsigned lto_count;              /* IR objects the LTO plugin claimed */
static bool target_seen;
static struct reserve_target target;

/* The state of this link. */
static uint64_t capacity;
static char *reserve_path;              /* the temporary object, if any */
static bool reserved;                   /* the region went into the link */
static bool failed;                     /* a fatal message was sent */
static struct order order;              /* read when opt_order is set */
static bool ordering;                   /* ... and this link applies it */

void
plugin_message (enum ld_plugin_level level, const char *fmt, ...)
{
  char text[1024];
  va_list ap;

  if (level == LDPL_WARNING && opt_quiet)
    return;
  if (level == LDPL_FATAL || level == LDPL_ERROR)
    failed = true;

  va_start (ap, fmt);
  vsnprintf (text, sizeof text, fmt, ap);
  va_end (ap);

  /* The linker formats its message with its own printf-like machinery,
   * which knows conversions of its own: pass the text as an argument.
   * ld.bfd prints LDPL_WARNING on stdout, where a build log hides it (and
   * LDPL_ERROR fails the link): a warning goes to stderr, in ld.bfd's own
   * form, from here.  gold prints warnings on stderr itself. */
  if (level == LDPL_WARNING && tv_message != NULL && !tv_gold)
    fprintf (stderr, "%s: warning: pbitmap: %s\n",
             program_invocation_name, text);
  else if (tv_message != NULL)
    tv_message (level, "pbitmap: %s", text);
  else
    fprintf (stderr, "pbitmap: %s\n", text);
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
      || value > RESERVE_CAPACITY_MAX)
    return false;
  *pages = value;
  return true;
}

static enum ld_plugin_status
parse_option (const char *opt)
{
  if (strncmp (opt, "runtime-dir=", 12) == 0)
    {
      if (opt[12] == '\0')
        {
          plugin_message (LDPL_FATAL, "runtime-dir= needs a directory");
          return LDPS_ERR;
        }
      opt_runtime_dir = opt + 12;
    }
  else if (strcmp (opt, "no-runtime") == 0)
    opt_no_runtime = true;
  else if (strcmp (opt, "verbose") == 0)
    opt_verbose = true;
  else if (strcmp (opt, "quiet") == 0)
    opt_quiet = true;
  else if (strcmp (opt, "hook=entry") == 0)
    opt_hook_preinit = false;
  else if (strcmp (opt, "hook=preinit") == 0)
    opt_hook_preinit = true;
  else if (strncmp (opt, "order=", 6) == 0)
    {
      if (opt[6] == '\0')
        {
          plugin_message (LDPL_FATAL, "order= needs an order file");
          return LDPS_ERR;
        }
      opt_order = opt + 6;
    }
  else if (strncmp (opt, "capacity=", 9) == 0)
    {
      if (!parse_capacity (opt + 9, &opt_capacity))
        {
          plugin_message (LDPL_FATAL, "capacity=%s: not a page count "
                          "between 1 and %" PRIu64, opt + 9,
                          RESERVE_CAPACITY_MAX);
          return LDPS_ERR;
        }
    }
  else
    {
      plugin_message (LDPL_FATAL, "unknown option '%s' (known: "
                      "runtime-dir=DIR, no-runtime, capacity=PAGES, "
                      "hook=entry|preinit, order=FILE, verbose, quiet)", opt);
      return LDPS_ERR;
    }
  return LDPS_OK;
}

/* Sizing. */

static void
add_bytes (uint64_t bytes)
{
  image_bytes = (image_bytes + bytes < image_bytes
                 ? UINT64_MAX : image_bytes + bytes);
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

/* What SIZE bytes of IR will become (LTO_GROWTH). */
static uint64_t
lto_bytes (uint64_t size)
{
  return size > UINT64_MAX / LTO_GROWTH ? UINT64_MAX : size * LTO_GROWTH;
}

/* Bytes the relocatable ELF will add to the image.  LTO IR carries no
 * machine code yet; its file size stands in for what it will become. */
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
  if (lto)
    bytes = lto_bytes (filesize) > bytes ? lto_bytes (filesize) : bytes;
  return bytes;
}

static void
remember_target (const GElf_Ehdr *ehdr)
{
  reserve_target_of (ehdr, &target);
  target_seen = true;
}

/* Account for the SIZE bytes at IMAGE, one input file or archive member
 * (FILE), and note where it defines the names of the order.  ld.bfd
 * offers a whole archive as well as the members it loads; only the
 * members count. */
static void
size_image (char *image, size_t size,
            const struct ld_plugin_input_file *file)
{
  Elf *elf = elf_memory (image, size);
  Elf_Kind kind = elf != NULL ? elf_kind (elf) : ELF_K_NONE;
  GElf_Ehdr ehdr;

  if (kind == ELF_K_NONE)
    {
      /* Not ELF, so something a compiler plugin will turn into code. */
      add_bytes (lto_bytes (size));
      input_count++;
    }
  else if (kind == ELF_K_ELF && gelf_getehdr (elf, &ehdr) != NULL
           && ehdr.e_type == ET_REL)
    {
      add_bytes (relocatable_bytes (elf, &ehdr, size));
      input_count++;
      if (!target_seen)
        remember_target (&ehdr);
      if (ordering)
        place_scan (&order, elf, file, tv_gold);
    }
  /* Shared libraries and the rest are not part of this image. */
  elf_end (elf);
}

/* Map the file or member (an archive member starts at FILE->offset, which
 * need not be page-aligned) privately and writably: libelf may convert
 * headers in place in an image it did not read itself. */
static void
size_input (const struct ld_plugin_input_file *file)
{
  long page = sysconf (_SC_PAGESIZE);
  off_t base, lead;
  char *map;

  if (file->filesize <= 0 || file->offset < 0)
    return;
  base = file->offset & ~(off_t) (page - 1);
  lead = file->offset - base;
  map = mmap (NULL, lead + file->filesize, PROT_READ | PROT_WRITE,
              MAP_PRIVATE, file->fd, base);
  if (map == MAP_FAILED)
    {
      /* Count it unread: overestimating is cheap. */
      add_bytes (file->filesize);
      input_count++;
      return;
    }
  size_image (map + lead, file->filesize, file);
  munmap (map, lead + file->filesize);
}

/* The hooks. */

static enum ld_plugin_status
onclaim_file (const struct ld_plugin_input_file *file, int *claimed)
{
  static bool allowed;

  *claimed = 0;
  /* gold takes this from claim_file on, not from onload. */
  if (ordering && tv_gold && !allowed)
    {
      tv_allow_section_ordering ();
      allowed = true;
    }
  if (tv_linker_output != LDPO_REL)
    size_input (file);
  return LDPS_OK;
}

static const char *
output_kind (void)
{
  switch (tv_linker_output)
    {
    case LDPO_EXEC: return "executable";
    case LDPO_PIE: return "PIE";
    case LDPO_DYN: return "shared library";
    default: return "relocatable";
    }
}

/* Whether the runtime of an executable goes into this link: only it has
 * the entry stub and its slot. */
static bool
executable_runtime (void)
{
  return (!opt_no_runtime
          && (tv_linker_output == LDPO_EXEC || tv_linker_output == LDPO_PIE));
}

/* Which header field the linker sets: the entry field of an executable
 * and the mark field of a shared library, when their runtime is linked. */
static enum reserve_link
region_link (void)
{
  if (executable_runtime ())
    return RESERVE_LINK_ENTRY;
  if (!opt_no_runtime && tv_linker_output == LDPO_DYN)
    return RESERVE_LINK_MARK;
  return RESERVE_LINK_NONE;
}

static enum ld_plugin_status
add_reserve_object (void)
{
  int fd = reserve_create_file (".o", &reserve_path);
  int status;

  if (fd < 0)
    return LDPS_ERR;
  status = reserve_write_object (fd, reserve_path, &target, capacity,
                                 region_link (), tv_gold);
  if (close (fd) != 0 && status == 0)
    {
      plugin_message (LDPL_FATAL, "%s: %s", reserve_path, strerror (errno));
      status = -1;
    }
  if (status != 0)
    return LDPS_ERR;
  if (tv_add_input_file (reserve_path) != LDPS_OK)
    {
      plugin_message (LDPL_FATAL, "the linker refused the region object %s",
                      reserve_path);
      return LDPS_ERR;
    }
  reserved = true;
  return LDPS_OK;
}

/* Adds the runtime object; *PATH is set to its name (to be freed), or
 * to NULL when no-runtime asks for none. */
static enum ld_plugin_status
add_runtime_object (char **path)
{
  const char *name = (tv_linker_output == LDPO_DYN
                      ? RUNTIME_SHARED : RUNTIME_EXEC);

  *path = NULL;
  if (opt_no_runtime)
    return LDPS_OK;
  if (asprintf (path, "%s/%s", opt_runtime_dir, name) < 0)
    {
      *path = NULL;
      plugin_message (LDPL_FATAL, "out of memory");
      return LDPS_ERR;
    }
  if (access (*path, R_OK) != 0)
    {
      plugin_message (LDPL_FATAL, "runtime object %s: %s (set "
                      "-plugin-opt=runtime-dir=DIR, or -plugin-opt=no-runtime "
                      "to reserve the region only)", *path, strerror (errno));
      return LDPS_ERR;
    }
  if (tv_add_input_file (*path) != LDPS_OK)
    {
      plugin_message (LDPL_FATAL, "the linker refused the runtime object %s",
                      *path);
      return LDPS_ERR;
    }
  return LDPS_OK;
}

/* The one line of -plugin-opt=verbose. */
static void
report_link (const char *runtime)
{
  char basis[128];

  if (opt_capacity != 0)
    snprintf (basis, sizeof basis, "set by capacity=");
  else
    snprintf (basis, sizeof basis, "estimated from %u inputs%s, %" PRIu64
              " KiB", input_count, lto_count != 0 ? " and the LTO plugin's"
              " IR objects" : "", image_bytes / 1024);
  plugin_message (LDPL_INFO, "%s: capacity %" PRIu64 " pages (%s), region "
                  "%" PRIu64 " bytes, runtime %s", output_kind (), capacity,
                  basis, pbitmap_region_size (capacity),
                  runtime != NULL ? runtime : "not linked (no-runtime)");
}

static enum ld_plugin_status
onall_symbols_read (void)
{
  enum ld_plugin_status status;
  char *runtime = NULL;

  if (tv_linker_output == LDPO_REL)
    {
      if (opt_verbose)
        plugin_message (LDPL_INFO, "relocatable link: nothing reserved");
      return LDPS_OK;
    }
  if (!target_seen)
    reserve_default_target (&target);
  add_bytes (lto_bytes (lto_claimed_bytes (&lto_count)));
  capacity = (opt_capacity != 0 ? opt_capacity
              : reserve_capacity_for (image_bytes));

  status = add_reserve_object ();
  if (status == LDPS_OK)
    status = add_runtime_object (&runtime);
  if (status == LDPS_OK && opt_verbose)
    report_link (runtime);
  if (status == LDPS_OK && ordering)
    {
      struct place_linker linker = { tv_gold, tv_add_input_file,
                                     tv_update_section_order };

      status = place_apply (&order, &linker, opt_verbose);
    }
  free (runtime);
  return status;
}

/* Say so when the inputs underestimated the image: the pages past the
 * capacity are never prefetched. */
static void
check_capacity (uint64_t image_pages)
{
  if (image_pages > capacity)
    plugin_message (LDPL_WARNING, "%s: the image has %" PRIu64 " pages but "
                    "the bitmap describes only %" PRIu64 "; relink with "
                    "-Wl,-plugin-opt=capacity=%" PRIu64 " to cover it all",
                    tv_output_name, image_pages, capacity, image_pages);
}

/* Say what became of the entry point, when it was meant to change. */
static void
report_entry (enum patch_entry entry)
{
  if (entry == ENTRY_NOT_FOUND)
    plugin_message (LDPL_WARNING, "%s: static executable, but the runtime's "
                    "entry slot was not found; the prefetch runs from "
                    ".preinit_array instead", tv_output_name);
  else if (entry == ENTRY_REDIRECTED && opt_verbose)
    plugin_message (LDPL_INFO, "%s: static executable: the entry point is "
                    "the runtime's stub", tv_output_name);
}

/* Patches the finished output and says what became of it. */
static enum ld_plugin_status
finish_output (void)
{
  struct patch_outcome outcome;

  switch (patch_output (tv_output_name,
                        executable_runtime () && !opt_hook_preinit, false,
                        &outcome))
    {
    case PATCH_DONE:
      check_capacity (outcome.image_pages);
      report_entry (outcome.entry);
      if (ordering && !opt_quiet)
        order_report (&order, tv_output_name);
      return LDPS_OK;
    case PATCH_NO_OUTPUT:
      return LDPS_OK;
    default:
      return LDPS_ERR;
    }
}

static enum ld_plugin_status
oncleanup (void)
{
  enum ld_plugin_status status = LDPS_OK;

  if (reserve_path != NULL)
    {
      unlink (reserve_path);
      free (reserve_path);
      reserve_path = NULL;
    }
  place_cleanup ();
  /* After a failed link there is nothing to patch, and a second fatal
   * message would only hide the first. */
  if (reserved && !failed)
    status = finish_output ();
  order_free (&order);
  return status;
}

/* onload. */

static enum ld_plugin_status
parse_tv_tag (struct ld_plugin_tv *tv)
{
#define SETVAR(x) x = tv->tv_u.x
  switch (tv->tv_tag)
    {
    case LDPT_MESSAGE:
      SETVAR (tv_message);
      break;
    case LDPT_REGISTER_CLAIM_FILE_HOOK:
      SETVAR (tv_register_claim_file);
      break;
    case LDPT_REGISTER_ALL_SYMBOLS_READ_HOOK:
      SETVAR (tv_register_all_symbols_read);
      break;
    case LDPT_REGISTER_CLEANUP_HOOK:
      SETVAR (tv_register_cleanup);
      break;
    case LDPT_ADD_INPUT_FILE:
      SETVAR (tv_add_input_file);
      break;
    case LDPT_UPDATE_SECTION_ORDER:
      SETVAR (tv_update_section_order);
      break;
    case LDPT_ALLOW_SECTION_ORDERING:
      SETVAR (tv_allow_section_ordering);
      break;
    case LDPT_OUTPUT_NAME:
      tv_output_name = tv->tv_u.tv_string;
      break;
    case LDPT_LINKER_OUTPUT:
      tv_linker_output = tv->tv_u.tv_val;
      tv_linker_output_seen = true;
      break;
    case LDPT_GOLD_VERSION:
      tv_gold = true;
      break;
    case LDPT_OPTION:
      return parse_option (tv->tv_u.tv_string);
    default:
      break;
    }
#undef SETVAR
  return LDPS_OK;
}

/* Names the first thing this plugin needs that the linker did not offer,
 * or returns NULL. */
static const char *
missing_interface (void)
{
  if (tv_register_claim_file == NULL)
    return "LDPT_REGISTER_CLAIM_FILE_HOOK";
  if (tv_register_all_symbols_read == NULL)
    return "LDPT_REGISTER_ALL_SYMBOLS_READ_HOOK";
  if (tv_register_cleanup == NULL)
    return "LDPT_REGISTER_CLEANUP_HOOK";
  if (tv_add_input_file == NULL)
    return "LDPT_ADD_INPUT_FILE";
  if (tv_output_name == NULL)
    return "LDPT_OUTPUT_NAME";
  if (!tv_linker_output_seen)
    return "LDPT_LINKER_OUTPUT";
  return NULL;
}

/* Reads the order file, when there is one and the link is not -r. */
static enum ld_plugin_status
start_order (void)
{
  if (opt_order == NULL || tv_linker_output == LDPO_REL)
    return LDPS_OK;
  if (tv_gold && (tv_update_section_order == NULL
                  || tv_allow_section_ordering == NULL))
    {
      plugin_message (LDPL_FATAL, "this gold does not offer section "
                      "ordering (LDPT_UPDATE_SECTION_ORDER), which "
                      "order= needs");
      return LDPS_ERR;
    }
  if (order_read (opt_order, &order) != 0)
    return LDPS_ERR;
  ordering = true;
  return LDPS_OK;
}

enum ld_plugin_status onload (struct ld_plugin_tv *tv);

enum ld_plugin_status
onload (struct ld_plugin_tv *tv)
{
  enum ld_plugin_status rv;
  const char *missing;

  if (tv == NULL)
    return LDPS_ERR;

  /* The message hook comes first, so that option errors can be told. */
  if (tv[0].tv_tag == LDPT_MESSAGE)
    tv_message = tv[0].tv_u.tv_message;

  do
    if ((rv = parse_tv_tag (tv)) != LDPS_OK)
      return rv;
  while ((tv++)->tv_tag != LDPT_NULL);

  if (tv_message == NULL)
    {
      fprintf (stderr, "pbitmap: the linker offers no message hook "
               "(LDPT_MESSAGE); use GNU ld (ld.bfd)\n");
      return LDPS_ERR;
    }
  missing = missing_interface ();
  if (missing != NULL)
    {
      plugin_message (LDPL_FATAL, "the linker does not offer %s; "
                      "use GNU ld (ld.bfd)", missing);
      return LDPS_ERR;
    }
  if (elf_version (EV_CURRENT) == EV_NONE)
    {
      plugin_message (LDPL_FATAL, "libelf: %s", elf_errmsg (-1));
      return LDPS_ERR;
    }
  if ((rv = start_order ()) != LDPS_OK)
    return rv;

  if ((rv = tv_register_claim_file (onclaim_file)) != LDPS_OK
      || (rv = tv_register_all_symbols_read (onall_symbols_read)) != LDPS_OK
      || (rv = tv_register_cleanup (oncleanup)) != LDPS_OK)
    {
      plugin_message (LDPL_FATAL, "the linker refused to register a hook");
      return rv;
    }
  return LDPS_OK;
}

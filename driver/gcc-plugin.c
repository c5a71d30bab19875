/* gcc-plugin.c: the compiler half of "gcc -fplugin=pbitmap".
 *
 * Users are told to build with -fplugin=pbitmap, but GCC hands -fplugin=
 * to cc1, which loads a *compiler* plugin of that name and fails when
 * there is none; the linker never hears of it.  pbitmap's work happens at
 * link time, where GCC's specs file turns the same flag into
 * "-plugin <pbitmap's linker plugin>" (see driver/gen-specs).  This module
 * only exists so that cc1 finds a valid plugin called pbitmap.so and goes
 * on compiling: it registers nothing and changes nothing.  Its arguments
 * (-fplugin-arg-pbitmap-order=FILE) are for the link, where the specs
 * file hands them to the linker plugin; here they are ignored.
 *
 * cc1 looks up just these two symbols, so GCC's plugin headers (and the
 * gcc-N-plugin-dev package) are not needed.
 */

/* GCC refuses to load a plugin without this symbol. */
int plugin_is_GPL_compatible;

struct plugin_name_args;
struct plugin_gcc_version;

int plugin_init (struct plugin_name_args *info, struct plugin_gcc_version *version);

int
plugin_init (struct plugin_name_args *info, struct plugin_gcc_version *version)
{
  (void) info;
  (void) version;
  return 0;
}

// llvm-o2: the large benchmark subject.  A compiler back end in one
// static binary built from Debian's LLVM archives: parse an LLVM IR file,
// run the O2 pipeline, emit an x86-64 object.  Its start-up touches a few
// thousand of its pages, scattered over tens of MiB, like any big CLI tool.
#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IRReader/IRReader.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>

// Built as a program, or (LLVM_O2_LIBRARY) as the body of a shared
// library that bench/subjects/llvm-o2-main.c calls: the same code, the
// same work, with its pages in a library instead of the executable.
#ifdef LLVM_O2_LIBRARY
extern "C" __attribute__ ((visibility ("default"))) int
llvm_o2_main (int argc, char **argv)
#else
int
main (int argc, char **argv)
#endif
{
  if (argc != 3)
    {
      llvm::errs () << "usage: llvm-o2 INPUT.ll OUTPUT.o\n";
      return 64;
    }
  // Every target LLVM was built with, as llc and clang register them,
  // though this run compiles for x86-64 only: most of the code in the
  // file is never run, as in any large multi-purpose program.
  llvm::InitializeAllTargetInfos ();
  llvm::InitializeAllTargets ();
  llvm::InitializeAllTargetMCs ();
  llvm::InitializeAllAsmPrinters ();
  llvm::InitializeAllAsmParsers ();

  llvm::LLVMContext context;
  llvm::SMDiagnostic diag;
  std::unique_ptr<llvm::Module> module = llvm::parseIRFile (argv[1], diag, context);
  if (!module)
    {
      diag.print (argv[0], llvm::errs ());
      return 1;
    }

  std::string triple = "x86_64-pc-linux-gnu", err;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget (triple, err);
  if (!target)
    {
      llvm::errs () << err << "\n";
      return 1;
    }
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> tm (target->createTargetMachine (
      triple, "x86-64", "", options, llvm::Reloc::PIC_));
  module->setTargetTriple (triple);
  module->setDataLayout (tm->createDataLayout ());

  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb (tm.get ());
  pb.registerModuleAnalyses (mam);
  pb.registerCGSCCAnalyses (cgam);
  pb.registerFunctionAnalyses (fam);
  pb.registerLoopAnalyses (lam);
  pb.crossRegisterProxies (lam, fam, cgam, mam);
  pb.buildPerModuleDefaultPipeline (llvm::OptimizationLevel::O2).run (*module, mam);

  std::error_code ec;
  llvm::raw_fd_ostream out (argv[2], ec, llvm::sys::fs::OF_None);
  if (ec)
    {
      llvm::errs () << argv[2] << ": " << ec.message () << "\n";
      return 1;
    }
  llvm::legacy::PassManager codegen;
  if (tm->addPassesToEmitFile (codegen, out, nullptr, llvm::CGFT_ObjectFile))
    {
      llvm::errs () << "cannot emit an object file\n";
      return 1;
    }
  codegen.run (*module);
  out.flush ();
  return 0;
}

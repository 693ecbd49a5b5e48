//! `cargo run -p experiments -- --exp <name>`: every embedlab experiment behind one flag, a thin
//! command line over the `experiments` library (`src/lib.rs` says where each part lives).

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, ValueEnum};
use experiments::{lock, paths, unused_flags, Args};

fn main() -> ExitCode {
    transformer::backend::keep_freed_memory();
    let matches = Args::command().get_matches();
    let mut args = match Args::from_arg_matches(&matches) {
        Ok(a) => a,
        Err(e) => e.exit(),
    };
    // A toy run never writes into the committed results unless `--out` says so.
    if args.quick && matches.value_source("out") != Some(clap::parser::ValueSource::CommandLine) {
        args.out = std::path::PathBuf::from(experiments::QUICK_OUT);
    }
    let unused = unused_flags(args.exp, &matches);
    if !unused.is_empty() {
        let name = args
            .exp
            .to_possible_value()
            .map(|v| v.get_name().to_string());
        eprintln!(
            "error: --exp {} does not use {}; it reads only {}",
            name.unwrap_or_default(),
            unused.join(", "),
            args.exp
                .flags()
                .iter()
                .map(|f| format!("--{f}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        return ExitCode::from(2);
    }
    // The backend this run computes on becomes burn's default device, so that nothing burn
    // creates "by default" (a loaded optimiser state) lands on another backend. Experiments that
    // compare every backend pin the default one, flex, unless one is named.
    transformer::backend::pin_default_device(experiments::device::backend(&args));
    // After the environment is set, since it starts the pool's thread. Speed only: a run goes
    // on with rayon's default pool if this cannot be done.
    if let Err(e) = transformer::backend::main_thread_in_pool() {
        eprintln!("warning: {e}");
    }
    // Held until the process exits: one writer per `--out` (`--jobs`' children run under their
    // parent's).
    let mut _out_lock = None;
    // `pretrained --estimate` writes nothing, so it neither creates `--out` nor waits for it.
    if args.exp.writes() && !args.estimate {
        if let Err(e) = paths::check_out(&args.out) {
            eprintln!("error: {e:#}");
            return ExitCode::FAILURE;
        }
        match lock::lock_out(&args.out, args.exp.is_child()) {
            Ok(l) => _out_lock = l,
            Err(e) => {
                eprintln!("error: {e:#}");
                return ExitCode::FAILURE;
            }
        }
    }
    match experiments::run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

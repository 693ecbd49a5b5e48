//! `cargo run -p experiments -- --exp <name>`: every embedlab experiment behind one flag, a thin
//! command line over the `experiments` library (`src/lib.rs` says where each part lives).

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, ValueEnum};
use experiments::{exp, paths, unused_flags, Args};

fn main() -> ExitCode {
    transformer::backend::keep_freed_memory();
    let matches = Args::command().get_matches();
    let args = match Args::from_arg_matches(&matches) {
        Ok(a) => a,
        Err(e) => e.exit(),
    };
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
    transformer::backend::pin_default_device(exp::train::backend(&args));
    // After the environment is set, since it starts the pool's thread. Speed only: a run goes
    // on with rayon's default pool if this cannot be done.
    if let Err(e) = transformer::backend::main_thread_in_pool() {
        eprintln!("warning: {e}");
    }
    if args.exp.writes() {
        if let Err(e) = paths::check_out(&args.out) {
            eprintln!("error: {e:#}");
            return ExitCode::FAILURE;
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

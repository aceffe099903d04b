fn main() {
    std::process::exit(topocoll::cli::main());
}

#include "sluice/jobs/cli.hpp"

int main(int argc, char** argv) { return sluice::run_sluice_cli(argc, argv); }

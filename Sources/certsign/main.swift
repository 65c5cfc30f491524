// certsign: the command-line tool. Everything happens in CertSignCLI; this only runs it and exits.
import CertSignCLI
import Foundation

CertSign.disableCoreDumps()
exit(await CertSign.main(arguments: Array(CommandLine.arguments.dropFirst())))

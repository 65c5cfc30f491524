// certsign-emulator: the DSS emulator as a program. It takes `certsign emulator`'s options and prints
// what it prints (`certsign emulator …` and `certsign demo` run this program); the command line is
// read by CertSignCLI, the server is EmulatorKit's.
import CertSignCLI
import Foundation

CertSign.disableCoreDumps()
exit(await CertSign.emulatorMain(arguments: Array(CommandLine.arguments.dropFirst()), runner: EmulatorServer.run))

import { Global, Module } from '@nestjs/common';
import { ChangeNotifications } from './change-notifications.js';

/** One LISTEN connection per process, for every cache that follows row changes (global). */
@Global()
@Module({ providers: [ChangeNotifications], exports: [ChangeNotifications] })
export class ChangeNotificationsModule {}
